//go:build !unix

package stdio

import (
	"os/exec"
	"syscall"
)

// supervise does nothing here: the process is stopped on its own.
func supervise(*exec.Cmd) *supervisorWatch { return nil }

// signalGroup signals the process alone (killing it for any signal but
// SIGTERM, which these systems cannot send).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if sig == syscall.SIGTERM {
		return cmd.Process.Signal(sig)
	}
	return cmd.Process.Kill()
}

// killTree kills the process.
func killTree(cmd *exec.Cmd) error { return cmd.Process.Kill() }
