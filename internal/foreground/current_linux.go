//go:build linux

package foreground

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// CurrentSupported reports whether ReadPaneProcs can read anything on this
// platform.
func CurrentSupported() bool { return true }

// maxPathLen is tmux's buffer for the cwd link (MAXPATHLEN): a longer
// target comes back cut to it, here as from tmux.
const maxPathLen = 4096

// ReadPaneProcs reads the panes whose first processes are pids, on up to
// GOMAXPROCS goroutines for a long list. A pid that cannot be read at all
// is missing from the map; one read only in part has Read unset.
func ReadPaneProcs(pids []int, o Options) map[int]PaneProc {
	return readPaneProcs(pids, o, min(runtime.GOMAXPROCS(0), len(pids)/32+1))
}

func readPaneProcs(pids []int, o Options, workers int) map[int]PaneProc {
	out := make(map[int]PaneProc, len(pids))
	if len(pids) == 0 {
		return out
	}
	got := make([]PaneProc, len(pids))
	okAt := make([]bool, len(pids))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := newProcReader(o)
			link := make([]byte, maxPathLen)
			for i := w; i < len(pids); i += workers {
				got[i], okAt[i] = r.paneProc(pids[i], link)
			}
		})
	}
	wg.Wait()
	for i, p := range got {
		if okAt[i] {
			out[p.PID] = p
		}
	}
	return out
}

// ChildrenRead is a read of every child of a tmux server (its panes'
// first processes, plus the jobs of run-shell and the like): what
// ReadPaneProcs reads, found without being told the panes' pids, so it can
// start while tmux answers for them. It runs on one goroutine, leaving the
// other cores to tmux; Wait joins it from the caller's.
type ChildrenRead struct {
	o      Options
	listed chan struct{} // closed once pids is set
	done   chan struct{} // closed when the goroutine has no more to read
	pids   []int         // nil when the children cannot be listed
	got    []PaneProc
	okAt   []bool
	next   atomic.Int64 // the next index of pids to read
}

// StartServerChildren starts reading the children of the process
// serverPID. The children are listed from /proc/PID/task/TID/children;
// a process that does not exist, or a kernel without that file, gives
// nothing.
func StartServerChildren(serverPID int, o Options) *ChildrenRead {
	c := &ChildrenRead{o: o, listed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.pids = listChildren(serverPID, o)
		c.got, c.okAt = make([]PaneProc, len(c.pids)), make([]bool, len(c.pids))
		close(c.listed)
		c.work()
	}()
	return c
}

// listChildren lists the children of pid; nil when they cannot be.
func listChildren(pid int, o Options) []int {
	if pid <= 0 {
		return nil
	}
	r := newProcReader(o)
	b, err := r.readFile(r.procPath(pid, "task", strconv.Itoa(pid), "children"))
	if err != nil {
		return nil
	}
	pids := []int{}
	for _, w := range bytes.Fields(b) {
		if v, err := strconv.Atoi(string(w)); err == nil {
			pids = append(pids, v)
		}
	}
	return pids
}

// work reads children until none is left unclaimed.
func (c *ChildrenRead) work() {
	r := newProcReader(c.o)
	link := make([]byte, maxPathLen)
	for {
		i := int(c.next.Add(1)) - 1
		if i >= len(c.pids) {
			return
		}
		c.got[i], c.okAt[i] = r.paneProc(c.pids[i], link)
	}
}

// Wait reads, on the calling goroutine too, the children not yet read,
// and returns them all as ReadPaneProcs does; nil when the children could
// not be listed.
func (c *ChildrenRead) Wait() map[int]PaneProc {
	<-c.listed
	c.work()
	<-c.done
	if c.pids == nil {
		return nil
	}
	out := make(map[int]PaneProc, len(c.pids))
	for i, p := range c.got {
		if c.okAt[i] {
			out[p.PID] = p
		}
	}
	return out
}

// paneProc reads one pane's first process and, through its terminal's
// foreground group, the group leader's command line and working directory,
// as osdep_get_name and osdep_get_cwd read them. ok is false when the
// process cannot be read at all.
func (r *procReader) paneProc(pid int, link []byte) (PaneProc, bool) {
	f, err := r.stat(pid)
	if err != nil {
		return PaneProc{}, false
	}
	p := PaneProc{PID: pid, PPID: f.ppid, TTYNr: f.ttyNr, TPGID: f.tpgid}
	if f.state == 'Z' || f.state == 'X' || f.tpgid <= 0 {
		// An ended pane (tmux names it from its argv), or a terminal
		// without a foreground group (tmux falls back to other sources):
		// tmux's own answer is needed.
		return p, true
	}
	b, err := r.readOnce(r.procPath(f.tpgid, "cmdline"))
	if err != nil {
		return p, true
	}
	if z := bytes.IndexByte(b, 0); z >= 0 {
		b = b[:z]
	}
	if len(b) == 0 {
		// A zombie leader or an empty argv[0]: tmux names the pane from
		// its own argv then.
		return p, true
	}
	p.Command = TmuxCommandName(string(b))
	n, err := unix.Readlink(r.procPath(f.tpgid, "cwd"), link)
	if err != nil || n <= 0 {
		// tmux would try the terminal's session leader next.
		return p, true
	}
	p.Path, p.Read = string(link[:n]), true
	return p, true
}

// deviceIs reports whether path names the character device nr here.
func deviceIs(path string, nr uint64) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	return unix.Major(st.Rdev) == linuxMajor(nr) && unix.Minor(st.Rdev) == linuxMinor(nr)
}

// readOnce reads a small /proc file with one read into the reader's
// buffer (valid until the next read): /proc/PID/stat comes whole from its
// first read, and of /proc/PID/cmdline only the first argument is wanted,
// so the read to end of file that readFile adds is not needed. A first
// read that fills the buffer (a command line longer than it) is finished
// by reading on.
func (r *procReader) readOnce(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	n, err := unix.Read(fd, r.buf)
	for err == unix.EINTR {
		n, err = unix.Read(fd, r.buf)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if n < len(r.buf) || bytes.IndexByte(r.buf[:n], 0) >= 0 {
		unix.Close(fd)
		return r.buf[:n], nil
	}
	// Longer than the buffer and no end of the first argument yet.
	b := append([]byte(nil), r.buf[:n]...)
	rest, err := r.readFD(fd)
	if err != nil {
		return nil, err
	}
	return append(b, rest...), nil
}
