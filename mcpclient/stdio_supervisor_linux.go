package mcpclient

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The supervisor of stdio servers (see SupervisorEnv): the init function
// sees the variable before main runs and becomes the supervisor, so every
// program that imports this package is its own supervisor without a
// separate binary or any call of its own.
func init() {
	if ppid := os.Getenv(SupervisorEnv); ppid != "" {
		os.Exit(runSupervisor(ppid))
	}
}

// supervisorPath is the program that supervises stdio servers, or "" when
// they are started directly.
var supervisorPath = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-buildmode" && (s.Value == "c-shared" || s.Value == "c-archive") {
				return ""
			}
		}
	}
	return "/proc/self/exe" // the running program, even once its file is replaced
}()

// supervise makes cmd start under the supervisor, the leader of a process
// group of its own, and has the supervisor told (SIGUSR1) when the thread
// that starts it ends (see spawner): a stdio server and all it started
// never outlive the process that runs it, even one killed with SIGKILL. It
// reports whether cmd now starts the supervisor.
func supervise(cmd *exec.Cmd) bool {
	if supervisorPath == "" || cmd.Err != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return false
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], SupervisorEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Args = append([]string{"agentmcp-stdio-supervisor", cmd.Path}, cmd.Args...)
	cmd.Path = supervisorPath
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGUSR1}
	return true
}

// killTree asks the supervisor to kill the server and all it started, and
// exit.
func killTree(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGUSR1) }

// runSupervisor runs os.Args[1] with arguments os.Args[2:] (its argv[0]
// first) and returns the exit code (or ends by the server's signal).
// parent is the pid of the process that started it.
func runSupervisor(parent string) int {
	sigs := make(chan os.Signal, 8)
	// SIGTERM, SIGINT and SIGHUP reach the server as the group's: the
	// supervisor waits for it to act on them.
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if strconv.Itoa(os.Getppid()) != parent {
		return 1 // the parent died before the signal was caught
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "agentmcp stdio supervisor:", err)
		return 1
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "agentmcp stdio supervisor: no command")
		return 2
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, SupervisorEnv+"=") {
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
		unix.Dup3(int(null.Fd()), 0, 0)
		unix.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}

	type exit struct {
		pid int
		ws  unix.WaitStatus
	}
	exits := make(chan exit)
	none := make(chan struct{}) // closed when no child is left
	go func() {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, unix.EINTR) {
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
	var status unix.WaitStatus
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
			unix.Kill(c, unix.SIGKILL)
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
		status = unix.WaitStatus(unix.SIGKILL) // killed on request
	}
	switch {
	case status.Signaled():
		sig := status.Signal()
		signal.Reset(sig)
		unix.Kill(self, sig)
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
