//go:build !linux

package main

import "os/exec"

// setProcAttr does nothing here: only Linux can tie a child's life to its
// parent's; stop ends the servers of a run that finishes.
func setProcAttr(*exec.Cmd) {}
