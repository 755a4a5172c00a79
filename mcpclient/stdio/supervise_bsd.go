//go:build unix && !linux

package stdio

import (
	"os/exec"
	"syscall"
)

// supervise makes cmd the leader of a process group of its own, so that it
// is stopped with whatever it starts. These systems have no parent-death
// signal: a server outlives a killed parent until it notices that its
// stdin closed (Linux runs servers under a supervisor:
// stdio_supervisor_linux.go).
func supervise(cmd *exec.Cmd) *supervisorWatch {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// killTree kills the server's process group.
func killTree(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGKILL) }
