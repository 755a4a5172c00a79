package mcpclient

import (
	"os/exec"
	"syscall"
)

// supervise makes cmd the leader of a process group of its own, so that it
// is stopped with whatever it starts, and has it killed when the thread
// that starts it ends (see spawner): a stdio server never outlives the
// process that runs it, even one killed with SIGKILL.
func supervise(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
