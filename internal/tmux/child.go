package tmux

import "os/exec"

// startChild starts every tmux process this package runs (control clients,
// exec one-offs, the wait-for child), so that it dies with this process:
// a control client left attached keeps a session looking attached and
// makes "tmux kill-server" hang until it is killed, and an orphaned
// "tmux wait-for" waits forever.
//
// Control clients also exit on EOF of their stdin, a pipe only this
// process holds (os/exec pipes are close-on-exec), which covers every
// system on a clean exit or a crash. A SIGKILL of this process closes that
// pipe too, but a one-off client has no stdin to watch; on Linux the
// kernel's parent-death signal covers every child (see child_linux.go).
func startChild(cmd *exec.Cmd) error { return startWithDeathSignal(cmd) }

// StartChild starts cmd the way this package starts tmux clients, so it
// dies with this process (on Linux by the parent-death signal). Package
// remote starts its ssh connection masters with it.
func StartChild(cmd *exec.Cmd) error { return startChild(cmd) }
