//go:build linux

package foreground

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Inspect reports what the foreground of the terminal t is doing, from
// /proc. It reads only files a process of the same user may read without
// ptrace attach rights, plus /proc/PID/task/TID/syscall where that is
// readable (unless o.NoSyscall), and opens the terminal to read its modes
// (never holding it open). It spawns nothing.
func Inspect(t Target, o Options) Report {
	r := newProcReader(o)
	defer r.close()
	s := r.collect(t)
	rep := decide(s)
	rep.At = time.Now()
	return rep
}

// Supported reports whether Inspect can answer on this platform.
func Supported() bool { return true }

// procReader reads /proc with one reusable buffer and no allocation per
// small file beyond what parsing keeps.
type procReader struct {
	taskDirs  map[int]int // open /proc/PID/task directories, by pid
	root      string
	noSyscall bool
	buf       []byte
	tty       *TTYFacts
	ttyPath   string
}

func newProcReader(o Options) *procReader {
	root := o.ProcRoot
	if root == "" {
		root = "/proc"
	}
	return &procReader{root: root, noSyscall: o.NoSyscall, buf: make([]byte, 4096)}
}

// close closes the directories the reader holds open.
func (r *procReader) close() {
	for _, fd := range r.taskDirs {
		unix.Close(fd)
	}
	r.taskDirs = nil
}

// readTask reads a thread's file relative to its process's open task
// directory: the kernel then looks up two names instead of the whole
// /proc path, which is most of the cost of a small /proc file.
func (r *procReader) readTask(pid, tid int, file string) ([]byte, error) {
	dfd, ok := r.taskDirs[pid]
	if !ok {
		var err error
		if dfd, err = unix.Open(r.procPath(pid, "task"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return nil, err
		}
		if r.taskDirs == nil {
			r.taskDirs = map[int]int{}
		}
		r.taskDirs[pid] = dfd
	}
	b := make([]byte, 0, 32)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, '/')
	b = append(b, file...)
	fd, err := unix.Openat(dfd, string(b), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return r.readFD(fd)
}

// readFile reads a small file into the reader's buffer; the result is
// valid until the next read.
func (r *procReader) readFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return r.readFD(fd)
}

// readFD reads fd to its end into the reader's buffer and closes it.
func (r *procReader) readFD(fd int) ([]byte, error) {
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		m, err := unix.Read(fd, r.buf[n:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return nil, err
		}
		if m == 0 {
			return r.buf[:n], nil
		}
		n += m
	}
}

func (r *procReader) procPath(pid int, parts ...string) string {
	b := make([]byte, 0, 64)
	b = append(b, r.root...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(pid), 10)
	for _, p := range parts {
		b = append(b, '/')
		b = append(b, p...)
	}
	return string(b)
}

// stat reads and parses /proc/PID/stat, in one read (readOnce).
func (r *procReader) stat(pid int) (statFields, error) {
	b, err := r.readOnce(r.procPath(pid, "stat"))
	if err != nil {
		return statFields{}, err
	}
	f, ok := parseStat(b)
	if !ok {
		return f, unix.EINVAL
	}
	return f, nil
}

// maxWalk bounds the processes a walk of a pane's tree visits.
const maxWalk = 512

// collect gathers the snapshot for t.
func (r *procReader) collect(t Target) *Snapshot {
	s := &Snapshot{Arch: goArchName[runtime.GOARCH], PanePID: t.PanePID, TicksPerSecond: 100}
	s.TTY.InQueue = -1
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) == nil {
		s.BootSeconds = float64(ts.Nano()) / 1e9
	}
	s.NowSchedMS = schedNowMS(r)
	if t.PanePID <= 0 || t.TTY == "" {
		s.Problem = "no pane pid or terminal"
		return s
	}
	// The pane's process first: a pane whose program ended has no
	// terminal to look at either.
	root, rootErr := r.stat(t.PanePID)
	if rootErr == unix.ENOENT || rootErr == unix.ESRCH {
		s.Problem, s.Gone = "the pane's first process has exited", true
		return s
	}
	var st unix.Stat_t
	if err := unix.Stat(t.TTY, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		s.Problem = "the pane's terminal " + t.TTY + " cannot be read here"
		return s
	}
	s.TTY.Major, s.TTY.Minor = unix.Major(st.Rdev), unix.Minor(st.Rdev)
	s.TTY.Ino, s.TTY.DevMajor, s.TTY.DevMinor = st.Ino, unix.Major(st.Dev), unix.Minor(st.Dev)
	if dt := devTTY(); dt.ok {
		s.TTY.DevTTYIno, s.TTY.DevTTYMajor, s.TTY.DevTTYMinor = dt.ino, dt.major, dt.minor
	}
	r.tty, r.ttyPath = &s.TTY, t.TTY

	if rootErr != nil {
		s.Problem = "cannot read the pane's first process: " + rootErr.Error()
		return s
	}
	if root.state == 'Z' || root.state == 'X' {
		s.Problem, s.Gone = "the pane's first process has exited", true
		return s
	}
	if !r.onTTY(root) {
		// Another pid namespace (a containerised server), or a pid reused.
		s.Problem = "the pane's pid is not on the pane's terminal here"
		return s
	}
	s.TPGID, s.PanePgrp = root.tpgid, root.pgrp
	s.PaneName = root.comm
	if s.TPGID <= 0 {
		s.Problem = "the terminal has no foreground process group"
		return s
	}
	seen := map[int]bool{}
	queue := []statFields{root}
	addMember := func(f statFields) {
		s.Members = append(s.Members, r.member(f))
	}
	for len(queue) > 0 && len(seen) < maxWalk {
		f := queue[0]
		queue = queue[1:]
		if seen[f.pid] {
			continue
		}
		seen[f.pid] = true
		if f.pgrp == s.TPGID && r.onTTY(f) && f.state != 'Z' && f.state != 'X' {
			addMember(f)
		}
		for _, c := range r.children(f) {
			if seen[c] {
				continue
			}
			if cf, err := r.stat(c); err == nil {
				queue = append(queue, cf)
			}
		}
		if len(queue) == 0 && !seen[s.TPGID] {
			// The leader is not below the pane's first process (its
			// parent died and it was adopted): look at it directly.
			if lf, err := r.stat(s.TPGID); err == nil && lf.pgrp == s.TPGID && r.onTTY(lf) {
				queue = append(queue, lf)
			} else {
				seen[s.TPGID] = true
			}
		}
	}
	for _, p := range s.Members {
		if p.PID == s.TPGID {
			p.Name = r.argv0(p.PID, p.Name)
		}
	}
	if len(s.Members) > 0 && s.Members[0].PID != s.TPGID {
		s.Members[0].Name = r.argv0(s.Members[0].PID, s.Members[0].Name)
	}
	r.readMode(s)
	s.written = r.written
	s.loadWait = r.loadWait
	s.loadFDs = r.loadFDs
	s.loadFD = r.loadFD
	s.loadRuns = func(p *Proc, t *Thread) { t.Runs, t.CPUNanos, t.RunsKnown = r.runs(p.PID, t.TID) }
	s.recheck = r.recheck
	s.lastRan = r.lastRan
	return s
}

// onTTY reports whether a process's controlling terminal is the pane's.
func (r *procReader) onTTY(f statFields) bool {
	return r.tty != nil && unix.Major(f.ttyNr) == r.tty.Major && unix.Minor(f.ttyNr) == r.tty.Minor
}

// member reads a foreground process's threads.
func (r *procReader) member(f statFields) *Proc {
	p := &Proc{PID: f.pid, PPID: f.ppid, Pgrp: f.pgrp, Name: f.comm, StartTicks: f.start}
	tids := []int{f.pid}
	if f.threads > 1 {
		tids = r.tasks(f.pid)
	}
	main := &Thread{TID: f.pid, State: f.state, Syscall: syscallUnknown}
	// A thread's wait channel says its state too: "0" exactly while it is
	// runnable (get_wchan), do_signal_stop or ptrace_stop when stopped,
	// anything else while it sleeps. One small file per thread instead of
	// two, trusted only when the main thread proves it on this kernel
	// (sleeping per stat, sleeping in a named function per wchan; some
	// kernels answer "0" for every thread).
	byWchan := false
	if len(tids) > 1 && (f.state == 'S' || f.state == 'D') {
		r.loadWait(p, main)
		byWchan = main.Wchan != "" && main.Wchan != "0"
	}
	for _, tid := range tids {
		if tid == f.pid {
			p.Threads = append(p.Threads, main)
			continue
		}
		t := &Thread{TID: tid, Syscall: syscallUnknown}
		if byWchan {
			b, err := r.readTask(f.pid, tid, "wchan")
			if err != nil {
				continue // ended meanwhile
			}
			t.Wchan, t.waitRead = string(bytes.TrimSpace(b)), true
			switch wchanName(t.Wchan) {
			case "0", "":
				t.State = 'R'
			case "do_signal_stop", "ptrace_stop":
				t.State = 'T'
			default:
				t.State = 'S'
				if !r.noSyscall && wchanAmbiguous(t.Wchan) {
					if b, err := r.readTask(f.pid, tid, "syscall"); err == nil {
						t.Syscall, t.Args = parseSyscall(b)
					}
				}
			}
		} else if b, err := r.readTask(f.pid, tid, "stat"); err == nil {
			if tf, ok := parseStat(b); ok {
				t.State = tf.state
			}
		} else {
			continue // ended meanwhile
		}
		p.Threads = append(p.Threads, t)
	}
	return p
}

// runs reads how many times a thread was scheduled and the CPU time it
// used (schedstat's third and first fields).
func (r *procReader) runs(pid, tid int) (runs, cpu uint64, ok bool) {
	b, err := r.readTask(pid, tid, "schedstat")
	if err != nil {
		return 0, 0, false
	}
	return parseSchedstat(b)
}

func (r *procReader) recheck(refs []threadRef) (bool, bool) {
	if len(refs) == 0 {
		return false, false
	}
	for _, ref := range refs {
		if v, _, ok := r.runs(ref.pid, ref.tid); ok && v != ref.runs {
			return true, true
		}
	}
	return false, true
}

// lastRan reads when a thread last ran, in the sched clock's ms.
func (r *procReader) lastRan(pid, tid int) float64 {
	b, err := r.readTask(pid, tid, "sched")
	if err != nil {
		return 0
	}
	return execStart(b)
}

// tasks lists a process's threads.
func (r *procReader) tasks(pid int) []int {
	tids, _ := r.readDirInts(r.procPath(pid, "task"))
	return tids
}

// readDirInts lists the numeric names in a directory; false when it
// cannot be opened.
func (r *procReader) readDirInts(dir string) ([]int, bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var out []int
	buf := make([]byte, 4096)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			return out, true
		}
		rest := buf[:n]
		for len(rest) > 0 {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			if len(rest) < 19 {
				break
			}
			reclen := int(rest[16]) | int(rest[17])<<8
			if reclen < 19 || reclen > len(rest) {
				break
			}
			name := rest[19:reclen]
			if z := bytes.IndexByte(name, 0); z >= 0 {
				name = name[:z]
			}
			if v, err := strconv.Atoi(string(name)); err == nil {
				out = append(out, v)
			}
			rest = rest[reclen:]
		}
	}
}

// childrenThreadsMax: a process with more threads has its children read
// from its main thread alone. A child is listed under the thread that
// forked it; programs with many threads (a Node or JVM runtime) fork from
// their main thread, and reading every worker's empty list would double
// the cost of an inspection.
const childrenThreadsMax = 8

// children lists a process's children, from its threads' children files.
func (r *procReader) children(f statFields) []int {
	tids := []int{f.pid}
	if f.threads > 1 && f.threads <= childrenThreadsMax {
		tids = r.tasks(f.pid)
	}
	var out []int
	for _, tid := range tids {
		b, err := r.readTask(f.pid, tid, "children")
		if err != nil {
			continue
		}
		for _, w := range bytes.Fields(b) {
			if v, err := strconv.Atoi(string(w)); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// argv0 is tmux's name for a process: argv[0]'s base name (comm when the
// command line is empty or unreadable).
func (r *procReader) argv0(pid int, comm string) string {
	b, err := r.readFile(r.procPath(pid, "cmdline"))
	if err != nil || len(b) == 0 {
		return comm
	}
	if z := bytes.IndexByte(b, 0); z >= 0 {
		b = b[:z]
	}
	if name := baseName(string(b)); name != "" {
		return name
	}
	return comm
}

// readMode opens the terminal (never keeping it: a held slave would keep
// the pane's terminal from hanging up) and reads its modes and input queue.
func (r *procReader) readMode(s *Snapshot) {
	fd, err := unix.Open(r.ttyPath, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Major(st.Rdev) != s.TTY.Major || unix.Minor(st.Rdev) != s.TTY.Minor {
		return
	}
	if tio, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		s.TTY.ModeKnown = true
		s.TTY.Canonical = tio.Lflag&unix.ICANON != 0
		s.TTY.Echo = tio.Lflag&unix.ECHO != 0
	}
	if n, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err == nil {
		s.TTY.InQueue = n
	}
}

// loadFDs reads a process's open files and, for its epoll sets, whether
// they hold the terminal.
func (r *procReader) loadFDs(p *Proc) {
	dir := r.procPath(p.PID, "fd")
	nums, ok := r.readDirInts(dir)
	if !ok {
		return // another user's process, or gone
	}
	if len(nums) > fdScanMax {
		// Reading every link of a big runtime (Node, a JVM) would cost
		// more than the rest of the inspection; its wait is judged from
		// the terminal's mode, as for a process whose files are not
		// readable (inferred).
		return
	}
	p.FDsRead = true
	// Links are read relative to the open directory: the kernel then
	// looks up one name per file instead of the whole /proc path.
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		p.FDsRead = false
		return
	}
	defer unix.Close(dfd)
	linkBuf := make([]byte, 256)
	for _, n := range nums {
		name := strconv.Itoa(n)
		m, err := unix.Readlinkat(dfd, name, linkBuf)
		if err != nil {
			continue
		}
		path := dir + "/" + name
		link := string(linkBuf[:m])
		f := FD{Num: n, Kind: r.linkKind(path, link)}
		if f.Kind == fdEpoll {
			f.EpollTTY, f.EpollRead = r.epollHoldsTTY(p.PID, n)
		}
		p.FDs = append(p.FDs, f)
	}
}

// fdScanMax is the most open files an inspection reads one by one for a
// process (the whole table is needed only where the system call a thread
// waits in cannot be read: a select/poll, or an epoll wait seen only by
// its wait channel).
const fdScanMax = 16

// loadFD reads one open file of a process: its link, and for an epoll set
// whether it holds the terminal.
func (r *procReader) loadFD(p *Proc, n int) (FD, bool) {
	path := r.procPath(p.PID, "fd", strconv.Itoa(n))
	var buf [256]byte
	m, err := unix.Readlink(path, buf[:])
	if err != nil {
		return FD{}, false
	}
	f := FD{Num: n, Kind: r.linkKind(path, string(buf[:m]))}
	if f.Kind == fdEpoll {
		f.EpollTTY, f.EpollRead = r.epollHoldsTTY(p.PID, n)
	}
	return f, true
}

// linkKind sorts an open file by its /proc/PID/fd link.
func (r *procReader) linkKind(path, link string) FDKind {
	switch {
	case link == r.ttyPath:
		return fdTTY
	case link == "/dev/tty":
		return fdDevTTY
	case hasPrefix(link, "socket:"):
		return fdSocket
	case hasPrefix(link, "pipe:"):
		return fdPipe
	case link == "anon_inode:[eventpoll]":
		return fdEpoll
	case link == "anon_inode:inotify":
		return fdInotify
	case hasPrefix(link, "anon_inode:"):
		return fdEvent
	case link == "/dev/null" || link == "/dev/zero" || link == "/dev/urandom" || link == "/dev/random":
		return fdOther
	case hasPrefix(link, "/dev/pts/"):
		return fdOtherTTY // not the pane's path: another terminal
	case hasPrefix(link, "/dev/"):
		var st unix.Stat_t
		if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			return fdOther
		}
		maj, min := unix.Major(st.Rdev), unix.Minor(st.Rdev)
		switch {
		case maj == r.tty.Major && min == r.tty.Minor:
			return fdTTY
		case maj == 5 && min == 0:
			return fdDevTTY
		case isTTYMajor(maj):
			return fdOtherTTY
		}
	}
	return fdOther
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// epollHoldsTTY reads an epoll set's targets from its fdinfo: each line
// "tfd: N events: E data: D pos:P ino:I sdev:S" names a target's inode and
// its file system's device (the kernel's encoding, major<<20|minor).
func (r *procReader) epollHoldsTTY(pid, fd int) (holds, read bool) {
	b, err := r.readFile(r.procPath(pid, "fdinfo", strconv.Itoa(fd)))
	if err != nil {
		return false, false
	}
	return epollTargetsHold(b, r.tty), true
}

type devTTYInfo struct {
	ok           bool
	ino          uint64
	major, minor uint32
}

var devTTYOnce = sync.OnceValue(func() devTTYInfo {
	var st unix.Stat_t
	if unix.Stat("/dev/tty", &st) != nil {
		return devTTYInfo{}
	}
	return devTTYInfo{ok: true, ino: st.Ino, major: unix.Major(st.Dev), minor: unix.Minor(st.Dev)}
})

func devTTY() devTTYInfo { return devTTYOnce() }

// The sched clock (sched's exec_start, ms since boot) runs beside
// CLOCK_MONOTONIC at an offset that is measured, not assumed: a thread
// that has just woken from a sleep has exec_start = now.
var schedClock struct {
	sync.Mutex
	offsetMS float64 // sched clock minus CLOCK_MONOTONIC
	at       time.Time
	ok       bool
}

const schedCalibrateEvery = 10 * time.Minute

func monotonicMS() float64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return float64(ts.Nano()) / 1e6
}

// schedNowMS is now on the sched clock; 0 when it cannot be calibrated.
func schedNowMS(r *procReader) float64 {
	schedClock.Lock()
	defer schedClock.Unlock()
	if !schedClock.ok || time.Since(schedClock.at) > schedCalibrateEvery {
		if off, ok := calibrateSched(r.root); ok {
			schedClock.offsetMS, schedClock.ok = off, true
		}
		schedClock.at = time.Now()
	}
	if !schedClock.ok {
		return 0
	}
	return monotonicMS() + schedClock.offsetMS
}

func calibrateSched(root string) (float64, bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	path := root + "/thread-self/sched"
	best, found := 0.0, false
	buf := make([]byte, 8192)
	for range 3 {
		_ = unix.Nanosleep(&unix.Timespec{Nsec: 20_000}, nil)
		before := monotonicMS()
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, false
		}
		n, err := unix.Read(fd, buf)
		unix.Close(fd)
		if err != nil || n <= 0 {
			return 0, false
		}
		es := execStart(buf[:n])
		if es <= 0 {
			return 0, false
		}
		// exec_start is at or before "before"; the smallest gap is the
		// closest to the woken instant.
		if off := es - before; !found || off > best {
			best, found = off, true
		}
	}
	return best, found
}

// written sums the members' wchar and names them; 0 and "" when a member's
// io file cannot be read.
func (r *procReader) written(ps []*Proc) (uint64, string) {
	var total uint64
	var names []byte
	for _, p := range ps {
		b, err := r.readFile(r.procPath(p.PID, "io"))
		if err != nil {
			return 0, ""
		}
		i := bytes.Index(b, []byte("wchar:"))
		if i < 0 {
			return 0, ""
		}
		line := b[i+len("wchar:"):]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 10, 64)
		if err != nil {
			return 0, ""
		}
		total += v
		names = strconv.AppendInt(append(names, ' '), int64(p.PID), 10)
	}
	return total, string(names)
}

// loadWait reads what a sleeping thread waits in: its wait channel and,
// where that does not say, its system call. Read on demand (decide skips
// threads beside a known reader), once per thread.
func (r *procReader) loadWait(p *Proc, t *Thread) {
	if t.waitRead || t.State == 'Z' || t.State == 'X' {
		return
	}
	t.waitRead = true
	if b, err := r.readTask(p.PID, t.TID, "wchan"); err == nil {
		t.Wchan = string(bytes.TrimSpace(b))
	}
	// The system call adds nothing where the wait channel already names a
	// wait on something else (a futex, a timer, a child).
	if !r.noSyscall && wchanAmbiguous(t.Wchan) {
		if b, err := r.readTask(p.PID, t.TID, "syscall"); err == nil {
			t.Syscall, t.Args = parseSyscall(b)
		}
	}
}
