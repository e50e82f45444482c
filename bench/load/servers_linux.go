package main

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill a server when this process dies, so
// an interrupted run leaves nothing listening.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
