package stdio

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
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
// returns the watch of the supervisor, or nil when cmd starts the server
// directly.
func supervise(cmd *exec.Cmd) *supervisorWatch {
	if supervisorPath == "" || cmd.Err != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return nil
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], SupervisorEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Args = append([]string{"agentmcp-stdio-supervisor", cmd.Path}, cmd.Args...)
	cmd.Path = supervisorPath
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGUSR1}
	cmd.ExtraFiles = []*os.File{w} // fd 3: the supervisor's report
	return &supervisorWatch{cmd: cmd, r: r, w: w, done: make(chan struct{})}
}

// killTree asks the supervisor to kill the server and all it started, and
// exit.
func killTree(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGUSR1) }

// supervisorWatch reads what a supervisor reports (the processes under it,
// and "exit" once it has killed them all: see package stdiosup) and
// notices its death: should it die before it said "exit" (SIGKILL, the
// OOM killer), the server and what it started run unsupervised, so the
// watch kills them itself, by process group and by the pids reported, and
// tells the connection (died), which ends, so that its owner starts the
// server anew.
type supervisorWatch struct {
	cmd  *exec.Cmd
	r, w *os.File
	done chan struct{} // closed once the report ended and what it needed is done
}

// started is called once cmd was started (err nil) or failed to start.
// died is called, from the watch's goroutine, if the supervisor dies
// unexpectedly, before anything is killed, with the reason.
func (s *supervisorWatch) started(err error, logger *slog.Logger, died func(error)) {
	if s == nil {
		return
	}
	s.w.Close() // the supervisor holds it now
	if err != nil {
		s.r.Close()
		close(s.done)
		return
	}
	go s.run(logger, died)
}

// wait returns once the supervisor's report ended (it exited or died) and,
// if it died, what it supervised was killed.
func (s *supervisorWatch) wait() {
	if s != nil {
		<-s.done
	}
}

func (s *supervisorWatch) run(logger *slog.Logger, died func(error)) {
	defer close(s.done)
	defer s.r.Close()
	var pids [][2]int // pid, start time
	exited := false
	lines := bufio.NewScanner(s.r)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 1 && f[0] == "exit":
			exited = true
		case len(f) > 0 && f[0] == "pids":
			pids = pids[:0]
			for _, p := range f[1:] {
				pid, start, _ := strings.Cut(p, ":")
				n, err1 := strconv.Atoi(pid)
				st, err2 := strconv.Atoi(start)
				if err1 == nil && err2 == nil && n > 0 {
					pids = append(pids, [2]int{n, st})
				}
			}
		}
	}
	if exited {
		return
	}
	pid := s.cmd.Process.Pid
	died(fmt.Errorf("the stdio server's supervisor (pid %d) died without stopping it: the server and all it started were killed", pid))
	// The supervisor led the group and is not reaped yet (a zombie until
	// the connection's Close), or the group still has members: its id is
	// not anyone else's.
	syscall.Kill(-pid, syscall.SIGKILL)
	killed := 0
	for _, p := range pids {
		if killRecorded(p[0], p[1]) {
			killed++
		}
	}
	logger.Warn("mcp stdio server's supervisor died without stopping the server; killed its process group and the processes it had reported",
		"supervisor_pid", pid, "reported", len(pids), "killed", killed)
}

// killRecorded kills the process pid if it is still the one that started
// at start (its /proc/PID/stat's 22nd field), and reports whether it did.
// The process is held by a pidfd (os.FindProcess) before it is checked, so
// the signal cannot reach a process that took the pid since.
func killRecorded(pid, start int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	if len(f) < 20 || string(f[19]) != strconv.Itoa(start) {
		return false
	}
	return p.Signal(syscall.SIGKILL) == nil
}
