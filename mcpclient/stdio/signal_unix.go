//go:build unix

package stdio

import (
	"os/exec"
	"syscall"
)

// signalGroup sends sig to the process group that cmd leads (supervise):
// the server and whatever it started (npx's node, a shell's children).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
