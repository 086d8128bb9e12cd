//go:build linux

package stdio

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pollable returns a second, non-blocking open file description of f when
// f is a pipe, so that reading or writing it parks a goroutine in Go's
// network poller instead of holding an OS thread in a blocking system
// call. mode is os.O_RDONLY for stdin, os.O_WRONLY for stdout.
//
// Why: an MCP client starts us with pipes as stdin and stdout, and the Go
// runtime uses an inherited blocking descriptor with plain read(2) and
// write(2). Between requests a thread sits in read(2) holding its
// processor; each request then needs the runtime's monitor thread (sysmon)
// to take the processor back and another thread woken to run it, which
// makes a server with one processor (see SingleProcessor) wait up to
// sysmon's 10 ms back-off per request, and one with two pay extra thread
// wake-ups on every call. A fresh description opened through
// /proc/self/fd can be made non-blocking without touching the client's
// description of the same pipe (O_NONBLOCK belongs to the description:
// the client's stays blocking). f itself stays open, unused.
//
// ok is false, and f is returned, when f is not a pipe (a terminal, a
// socket, a file) or /proc cannot open it again: it is used as before.
func Pollable(f *os.File, mode int) (_ *os.File, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return f, false
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), mode|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, false
	}
	// The same pipe, not whatever the path names by now.
	var again unix.Stat_t
	if unix.Fstat(fd, &again) != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		unix.Close(fd)
		return f, false
	}
	return os.NewFile(uintptr(fd), f.Name()), true
}
