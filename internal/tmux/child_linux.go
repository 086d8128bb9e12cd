//go:build linux

package tmux

import (
	"os/exec"
	"runtime"
	"syscall"
)

// On Linux every child gets a parent-death signal (PR_SET_PDEATHSIG).
// The kernel sends it when the thread that forked the child exits, not the
// process (golang/go#27505): a Go program can lose threads, since a
// goroutine that ends while locked to its thread takes the thread with it,
// and a child forked from such a thread would be killed while this process
// lives on. So children are started from one goroutine locked to its own
// thread that never returns: that thread ends only with the process. Go
// serialises fork/exec under syscall.ForkLock anyway, so funnelling the
// starts through one goroutine costs nothing measurable.
//
// SIGTERM, not SIGKILL: a tmux client handles it by telling its server it
// is leaving (MSG_EXITING) and exits, so the server drops the client at
// once and cleanly; a client killed outright leaves the server to notice a
// dead socket.
var starts = make(chan startReq)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range starts {
			r.done <- r.cmd.Start()
		}
	}()
}

func startWithDeathSignal(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	done := make(chan error, 1)
	starts <- startReq{cmd, done}
	return <-done
}
