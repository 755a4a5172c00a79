package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"syscall"
	"time"
)

// childOutput runs a child process (killed if the benchmark dies) and
// returns its standard output; what names it in errors, which carry its
// standard error.
func childOutput(ctx context.Context, what, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", what, err, stderr.String())
	}
	return out, nil
}

// childJSON runs a child process that prints one JSON report into v.
func childJSON(ctx context.Context, what string, v any, name string, args ...string) error {
	out, err := childOutput(ctx, what, name, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s printed %q: %w", what, out, err)
	}
	return nil
}

// startCPUProfile profiles this process's CPU into the file at path, if
// path is set, until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
