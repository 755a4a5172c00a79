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
	"time"
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
	// fd 3 is the report pipe to the client (see report); the server
	// must not hold it, or the client could not see the supervisor die.
	rep := &report{f: os.NewFile(3, "report")}
	syscall.CloseOnExec(3)
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
		rep.exit() // nothing was started: the supervisor did not die
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
	self := os.Getpid()
	rep.record(self)
	// The tree is recorded again at growing intervals (a server starts
	// its children soon after it starts: npx's node, a shell's command),
	// and soon after an exit under it (an orphan may have been adopted),
	// at most once per recordFirst.
	every := recordFirst
	tick := time.NewTimer(every)
	defer tick.Stop()
	soon := false // tick was moved closer by an exit
	var status syscall.WaitStatus
	done, asked := false, false
	for !done && !asked {
		select {
		case e := <-exits:
			if e.pid == pid {
				status, done = e.ws, true
			} else if !soon {
				soon = true
				tick.Reset(recordFirst)
			}
		case sig := <-sigs:
			asked = sig == syscall.SIGUSR1
		case <-tick.C:
			rep.record(self)
			if !soon {
				every = min(2*every, recordMax)
			}
			soon = false
			tick.Reset(every)
		}
	}
	// Kill every child until none is left: a child's orphans become ours
	// when it dies, before it can be reaped.
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
	rep.exit() // nothing is left to kill
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

// How often the supervisor records the tree it supervises: first after
// recordFirst, then at doubling intervals up to recordMax.
const (
	recordFirst = 50 * time.Millisecond
	recordMax   = 30 * time.Second
)

// report is the pipe on which the supervisor tells the client what it
// supervises, so that the client can kill it all should the supervisor
// die (SIGKILL, the OOM killer) and leave it unsupervised. Each line is
// either "pids PID:START ..." (every process under the supervisor, with
// its start time, /proc/PID/stat's 22nd field, so that a pid reused since
// is not mistaken for it), sent when the set changes, or "exit", sent
// once nothing is left to kill. The client reads the pipe's end without
// "exit" as the supervisor's death. Write errors are ignored: a client
// that is gone has nothing to learn.
type report struct {
	f    *os.File
	last string
}

func (r *report) record(self int) {
	var b strings.Builder
	b.WriteString("pids")
	for _, p := range descendantsOf(self) {
		fmt.Fprintf(&b, " %d:%d", p.pid, p.start)
	}
	if line := b.String(); line != r.last {
		r.last = line
		r.f.WriteString(line + "\n")
	}
}

func (r *report) exit() { r.f.WriteString("exit\n") }

// proc is a process of /proc: its pid, parent and start time.
type proc struct{ pid, ppid, start int }

// processes lists the processes of /proc.
func processes() []proc {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... starttime (the 22nd field): comm may
		// hold spaces and parentheses.
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		start, _ := strconv.Atoi(string(f[19]))
		out = append(out, proc{pid: p, ppid: ppid, start: start})
	}
	return out
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	for _, p := range processes() {
		if p.ppid == pid {
			out = append(out, p.pid)
		}
	}
	return out
}

// descendantsOf lists the processes under pid: its children, theirs, and
// so on.
func descendantsOf(pid int) []proc {
	all := processes()
	under := map[int]bool{pid: true}
	var out []proc
	for grew := true; grew; {
		grew = false
		for _, p := range all {
			if under[p.ppid] && !under[p.pid] {
				under[p.pid] = true
				out = append(out, p)
				grew = true
			}
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
