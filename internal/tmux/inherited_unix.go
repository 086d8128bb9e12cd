//go:build unix

package tmux

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// A descriptor this process inherited without close-on-exec would pass to
// every child it starts, and tmux keeps it: a tmux server that a call
// starts (new-session on a fresh socket) holds every descriptor it
// inherited for as long as it runs; only the panes' processes are spared.
// A parent that waits for such a pipe to close then waits for the tmux
// server, which may run for weeks, instead of for this process. Go's fuzz
// coordinator hung that way: its workers inherit their two pipes without
// close-on-exec, a worker stopped mid-input leaves its test's tmux server
// running, and the coordinator read from the pipe the server still held,
// for good. An agent that hands an MCP server a pipe beyond stdio would
// hang the same way.
//
// So at start-up every inherited descriptor above stderr is marked
// close-on-exec. Go opens its own files close-on-exec already, so only
// inherited ones change, and this process keeps using them; children still
// get their stdin, stdout, stderr and ExtraFiles (which exec duplicates
// into place).
func init() { closeInheritedOnExec() }

func closeInheritedOnExec() {
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd" // /dev/fd is a symlink to it, absent in some containers
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // nowhere to list them: leave them as they are
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The descriptor of the listing itself is closed by now; marking a
		// closed number fails harmlessly (EBADF).
		syscall.CloseOnExec(fd)
	}
}
