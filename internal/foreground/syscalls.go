package foreground

// syscallClass sorts the system calls a blocked thread can sit in by what
// they say about the terminal.
type syscallClass int

const (
	scOther   syscallClass = iota // anything else: a timer, a child, a lock, a socket call
	scRead                        // read(fd, ...) and its vector/positional forms: fd is the first argument
	scEpoll                       // epoll_wait(epfd, ...): the set is the first argument
	scSelect                      // select(nfds, ...): nfds is the first argument
	scPoll                        // poll(fds, nfds, ...): nfds is the second argument
	scPselect                     // pselect6: as select
	scUring                       // io_uring_enter: what it waits for cannot be seen
)

// syscallTables maps an architecture (as uname -m names it) to the system
// call numbers that matter; every other number is scOther. Numbers from
// the kernel's unistd tables (x86_64: arch/x86/entry/syscalls; aarch64:
// the generic table).
var syscallTables = map[string]map[int]syscallClass{
	"x86_64": {
		0: scRead, 17: scRead, 19: scRead, 295: scRead, 327: scRead,
		7: scPoll, 271: scPoll,
		23: scSelect, 270: scPselect,
		232: scEpoll, 281: scEpoll, 441: scEpoll,
		426: scUring,
	},
	"aarch64": {
		63: scRead, 67: scRead, 65: scRead, 69: scRead, 286: scRead,
		73: scPoll,
		72: scPselect,
		22: scEpoll, 441: scEpoll,
		426: scUring,
	},
}

// goArchName maps GOARCH to uname -m's name for the local table.
var goArchName = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}

// classify returns the class of system call nr on arch, and whether the
// architecture's table is known at all.
func classify(arch string, nr int) (syscallClass, bool) {
	t, ok := syscallTables[arch]
	if !ok {
		return scOther, false
	}
	return t[nr], true
}
