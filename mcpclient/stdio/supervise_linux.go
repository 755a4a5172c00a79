package stdio

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/agentmcp/agentmcp/internal/stdiosup"
)

// The supervisor of stdio servers (see SupervisorEnv) is package
// stdiosup: its init function sees the variable before main runs and
// becomes the supervisor, so every program that imports this package is
// its own supervisor without a separate binary or any call of its own.
// (Its Env is SupervisorEnv.)
var _ = stdiosup.Env

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
// that starts it ends (see Starter): a stdio server and all it started
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
