package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/peers"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformance builds the client and runs the conformance suite's
// scenarios against it, one by one. It reads checks.json, not only the exit
// status: the suite passes a client that does nothing for some scenarios,
// so each must report the checks that prove the behaviour, all SUCCESS,
// and no check may fail or warn.
func TestConformance(t *testing.T) {
	peers.Require(t)
	bin := build(t)
	tests := []struct {
		scenario string
		want     []string // check ids that must be SUCCESS
	}{
		{"initialize", []string{"mcp-client-initialization"}},
		{"tools_call", []string{"tool-add-numbers"}},
		{"elicitation-sep1034-client-defaults", []string{
			"client-elicitation-sep1034-string-default",
			"client-elicitation-sep1034-integer-default",
			"client-elicitation-sep1034-number-default",
			"client-elicitation-sep1034-enum-default",
			"client-elicitation-sep1034-boolean-default",
		}},
		{"sse-retry", []string{"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			t.Parallel()
			checks := runScenario(t, bin, tt.scenario)
			got := map[string]string{}
			for _, c := range checks {
				switch c.Status {
				case "FAILURE", "WARNING":
					t.Errorf("%s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
				}
				if prev, ok := got[c.ID]; !ok || prev == "SUCCESS" {
					got[c.ID] = c.Status
				}
			}
			for _, id := range tt.want {
				if got[id] != "SUCCESS" {
					t.Errorf("check %s: %q, want SUCCESS", id, got[id])
				}
			}
		})
	}
}

// build compiles the client into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "client")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runScenario runs the suite for one scenario and returns its checks.
func runScenario(t *testing.T, bin, scenario string) []check {
	t.Helper()
	out := t.TempDir()
	c := peers.ConformanceCommand(t, "client", "--command", bin, "--scenario", scenario, "-o", out, "--timeout", "30000")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	logs, err := cmd.CombinedOutput()
	t.Logf("conformance %s:\n%s", scenario, logs)
	if err != nil {
		t.Errorf("conformance %s: %v", scenario, err)
	}
	files, _ := filepath.Glob(filepath.Join(out, scenario+"-*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("%d checks.json files for %s in %s", len(files), scenario, out)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("checks.json: %v", err)
	}
	return checks
}
