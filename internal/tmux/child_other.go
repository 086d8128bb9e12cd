//go:build !linux

package tmux

import "os/exec"

// Without a parent-death signal, control clients still exit on EOF of
// their stdin when this process ends; one-off clients end on their own.
func startWithDeathSignal(cmd *exec.Cmd) error { return cmd.Start() }
