package stdiosup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Env is stdio.SupervisorEnv (package mcpclient/stdio).
const Env = "AGENTMCP_STDIO_SUPERVISOR"

func init() {
	if ppid := os.Getenv(Env); ppid != "" {
		os.Exit(run(ppid))
	}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// run runs os.Args[1] with arguments os.Args[2:] (its argv[0]
// first) and returns the exit code (or ends by the server's signal).
// parent is the pid of the process that started it.
func run(parent string) int {
	sigs := make(chan os.Signal, 8)
	// SIGTERM, SIGINT and SIGHUP reach the server as the group's: the
	// supervisor waits for it to act on them.
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if strconv.Itoa(os.Getppid()) != parent {
		return 1 // the parent died before the signal was caught
	}
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		fmt.Fprintln(os.Stderr, "agentmcp stdio supervisor:", err)
		return 1
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "agentmcp stdio supervisor: no command")
		return 2
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, Env+"=") {
			env = append(env, kv)
		}
	}
	server := &exec.Cmd{
		Path: os.Args[1], Args: os.Args[2:], Env: env,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// Started from the main thread (init runs on it), which lives as
		// long as the supervisor.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := server.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	// The server holds stdin and stdout now: the supervisor's copies go,
	// so that the server's exit ends the stream the Manager reads.
	if null, err := os.Open(os.DevNull); err == nil {
		syscall.Dup3(int(null.Fd()), 0, 0)
		syscall.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}

	type exit struct {
		pid int
		ws  syscall.WaitStatus
	}
	exits := make(chan exit)
	none := make(chan struct{}) // closed when no child is left
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil { // ECHILD
				close(none)
				return
			}
			exits <- exit{pid, ws}
		}
	}()

	pid := server.Process.Pid
	var status syscall.WaitStatus
	done, asked := false, false
	for !done && !asked {
		select {
		case e := <-exits:
			if e.pid == pid {
				status, done = e.ws, true
			}
		case sig := <-sigs:
			asked = sig == syscall.SIGUSR1
		}
	}
	// Kill every child until none is left: a child's orphans become ours
	// when it dies, before it can be reaped.
	self := os.Getpid()
	for {
		for _, c := range childrenOf(self) {
			syscall.Kill(c, syscall.SIGKILL)
		}
		select {
		case e := <-exits:
			if e.pid == pid && !done {
				status, done = e.ws, true
			}
			continue
		case <-none:
		}
		break
	}
	if asked {
		status = syscall.WaitStatus(syscall.SIGKILL) // killed on request
	}
	switch {
	case status.Signaled():
		sig := status.Signal()
		signal.Reset(sig)
		syscall.Kill(self, sig)
		return 128 + int(sig) // a signal the supervisor survives
	case status.Exited():
		return status.ExitStatus()
	}
	return 1
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(strconv.Itoa(pid))
	var out []int
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) > 1 && bytes.Equal(f[1], want) {
			out = append(out, p)
		}
	}
	return out
}

func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}
