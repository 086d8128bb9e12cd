//go:build linux

package stdio

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pollable returns a non-blocking way to read or write f when f is a pipe
// or a socket, so that reading or writing it parks a goroutine in Go's
// network poller instead of holding an OS thread in a blocking system
// call. mode is os.O_RDONLY for stdin, os.O_WRONLY for stdout.
//
// Why: an MCP client starts us with pipes or sockets as stdin and stdout,
// and the Go runtime uses an inherited blocking descriptor with plain
// read(2) and
// write(2). Between requests a thread sits in read(2) holding its
// processor; each request then needs the runtime's monitor thread (sysmon)
// to take the processor back and another thread woken to run it, which
// makes a server with one processor (internal/cli/stdio_procs.go) wait up to
// sysmon's 10 ms back-off per request, and one with two pay extra thread
// wake-ups on every call. For a pipe, a fresh description opened through
// /proc/self/fd can be made non-blocking without touching the client's
// description of the same pipe (O_NONBLOCK belongs to the description:
// the client's stays blocking). f itself stays open, unused.
//
// A socket (what Node's child_process makes for a child's stdio, so what
// most MCP clients give) cannot be opened again; its description is made
// non-blocking instead, on a duplicate descriptor. That description is the
// client's end only as far as this process holds it: the client keeps the
// other end of the socket pair, and only a wrapper that started us with its
// own stdio inherited (and stays alive) shares it. restore puts the flags
// back as they were; call it once serving has ended.
//
// ok is false, and f is returned, when f is neither a pipe nor a socket (a
// terminal, a file) or cannot be opened again: it is used as before.
func Pollable(f *os.File, mode int) (_ *os.File, restore func(), ok bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return f, func() {}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return reopenPipe(f, mode, &st)
	case unix.S_IFSOCK:
		return nonblockingSocket(f)
	}
	return f, func() {}, false
}

// reopenPipe opens the pipe f a second time, non-blocking.
func reopenPipe(f *os.File, mode int, st *unix.Stat_t) (*os.File, func(), bool) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), mode|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, false
	}
	// The same pipe, not whatever the path names by now.
	var again unix.Stat_t
	if unix.Fstat(fd, &again) != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		unix.Close(fd)
		return f, func() {}, false
	}
	return os.NewFile(uintptr(fd), f.Name()), func() {}, true
}

// nonblockingSocket duplicates the socket f and makes its description
// non-blocking; restore puts the description's flags back.
func nonblockingSocket(f *os.File) (*os.File, func(), bool) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, false
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil && flags&unix.O_NONBLOCK == 0 {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags|unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return f, func() {}, false
	}
	restore := func() {
		// On the descriptor this process was given, which stays open
		// (the duplicate may be closed by then).
		_, _ = unix.FcntlInt(f.Fd(), unix.F_SETFL, flags)
	}
	return os.NewFile(uintptr(fd), f.Name()), restore, true
}
