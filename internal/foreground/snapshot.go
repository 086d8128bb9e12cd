package foreground

import (
	"strings"
)

// A Snapshot holds the facts a decision reads, gathered from one system at
// one moment: locally from /proc, or from a remote host's dump of the same
// files. decide works on it alone, so both paths answer alike.
type Snapshot struct {
	// Arch names the syscall table ("x86_64", "aarch64"); "" when unknown.
	Arch string
	// PanePID is the pane's first process; PanePgrp its process group.
	PanePID, PanePgrp int
	PaneName          string
	// TTY is what is known of the pane's terminal.
	TTY TTYFacts
	// TPGID is the terminal's foreground process group, read from the
	// pane's first process (/proc/PID/stat).
	TPGID int
	// Members are the live members of the foreground group found on the
	// terminal.
	Members []*Proc
	// Problem, when set, is why nothing can be decided ("pid not on this
	// terminal"); Gone means the pane's first process no longer exists.
	Problem string
	Gone    bool
	// Now is when the snapshot was taken on the sched clock (ms since
	// boot, the clock of sched's exec_start); 0 when unknown.
	NowSchedMS float64
	// BootSeconds is the time since boot when the snapshot was taken (the
	// clock of a process's start time); 0 when unknown.
	BootSeconds float64
	// TicksPerSecond is the clock of /proc start times (USER_HZ).
	TicksPerSecond float64

	// loadFDs reads a process's open files when the decision needs them
	// (locally, lazily); a remote dump fills Proc.FDs up front. loadFD
	// reads one of them (a read's or an epoll_wait's file), and loadRuns a
	// thread's scheduling counters, likewise only when needed.
	written  func(ps []*Proc) (uint64, string)
	loadWait func(p *Proc, t *Thread) // reads a thread's wait channel and system call, once
	loadFDs  func(p *Proc)
	loadFD   func(p *Proc, fd int) (FD, bool)
	loadRuns func(p *Proc, t *Thread)
	// recheck re-reads the scheduling counters of threads, to tell
	// whether they ran since the snapshot; nil when it cannot.
	recheck func(tids []threadRef) (changed bool, ok bool)
	// lastRan reads when a thread last ran (sched clock ms); nil or 0
	// when unknown.
	lastRan func(pid, tid int) float64
}

// TTYFacts is what is known of a terminal.
type TTYFacts struct {
	// Major and Minor are its device numbers; Ino and DevMajor/DevMinor
	// identify its inode (to find it in epoll sets).
	Major, Minor       uint32
	Ino                uint64
	DevMajor, DevMinor uint32
	// DevTTYIno and DevTTYDev* identify /dev/tty's inode: a program that
	// opened /dev/tty reads its controlling terminal through it.
	DevTTYIno                uint64
	DevTTYMajor, DevTTYMinor uint32
	// ModeKnown: Canonical and Echo were read.
	ModeKnown       bool
	Canonical, Echo bool
	// InQueue is the number of unread input bytes, -1 when unknown.
	InQueue int
}

// Proc is one member of the foreground group.
type Proc struct {
	PID, PPID, Pgrp int
	// Name is argv[0]'s base name, as tmux's pane_current_command.
	Name string
	// StartTicks is the process's start, in clock ticks since boot.
	StartTicks uint64
	Threads    []*Thread
	// FDs are its open files; FDsRead says they were read (nil FDs and
	// FDsRead false: not read, or unreadable).
	FDs     []FD
	FDsRead bool
}

// Thread is one thread's scheduling facts.
type Thread struct {
	TID int
	// State is the letter of /proc/PID/task/TID/stat: R running, S
	// sleeping, D uninterruptible, T stopped, t traced, Z zombie...
	State byte
	// Wchan is the kernel function it sleeps in ("" unknown).
	Wchan string
	// Syscall is the system call it is blocked in, from
	// /proc/PID/task/TID/syscall: -1 not blocked in one, -2 unknown
	// (unreadable); Args its first arguments.
	Syscall int
	Args    [3]uint64
	// Runs counts how many times it was scheduled (schedstat's third
	// field); RunsKnown says it was read.
	Runs      uint64
	RunsKnown bool
	// CPUNanos is the CPU time it has used (schedstat's first field).
	CPUNanos uint64
	waitRead bool // Wchan and Syscall were read (loadWait)
}

const (
	syscallNone    = -1
	syscallUnknown = -2
)

// FDKind sorts open files by what a thread could block on.
type FDKind int

const (
	fdOther    FDKind = iota // a regular file, directory, /dev/null...
	fdTTY                    // this pane's terminal
	fdDevTTY                 // /dev/tty (the controlling terminal, this one)
	fdOtherTTY               // another terminal
	fdSocket
	fdPipe
	fdEpoll
	fdInotify
	fdEvent // eventfd, timerfd, signalfd, pidfd, userfaultfd...
)

// FD is one open file of a process.
type FD struct {
	Num  int
	Kind FDKind
	// EpollTTY: an epoll instance whose set holds this terminal (or
	// /dev/tty); meaningful for fdEpoll with EpollRead.
	EpollTTY, EpollRead bool
}

// threadRef names a thread for a recheck, with the counter it had.
type threadRef struct {
	pid, tid int
	runs     uint64
}

// fd returns one open file of p.
func (s *Snapshot) fd(p *Proc, n int) (FD, bool) {
	if !p.FDsRead && s.loadFD != nil {
		return s.loadFD(p, n)
	}
	fds, ok := s.fds(p)
	if !ok {
		return FD{}, false
	}
	for _, f := range fds {
		if f.Num == n {
			return f, true
		}
	}
	return FD{}, false
}

// runs makes sure t's scheduling counters are read, where they can be.
func (s *Snapshot) runs(p *Proc, t *Thread) {
	if !t.RunsKnown && s.loadRuns != nil {
		s.loadRuns(p, t)
	}
}

// fds returns p's open files, reading them if the snapshot can.
func (s *Snapshot) fds(p *Proc) ([]FD, bool) {
	if !p.FDsRead && s.loadFDs != nil {
		s.loadFDs(p)
	}
	return p.FDs, p.FDsRead
}

// baseName is what tmux shows of an argv[0]: its last path element,
// without the leading "-" of a login shell.
func baseName(argv0 string) string {
	if i := strings.LastIndexByte(argv0, '/'); i >= 0 {
		argv0 = argv0[i+1:]
	}
	return strings.TrimPrefix(argv0, "-")
}

// sinceSched converts a sched-clock instant into seconds before the
// snapshot; -1 when unknown.
func (s *Snapshot) sinceSched(ms float64) float64 {
	if ms <= 0 || s.NowSchedMS <= 0 {
		return -1
	}
	return max(0, (s.NowSchedMS-ms)/1000)
}

func roundSeconds(v float64) float64 {
	return float64(int64(v*10+0.5)) / 10
}
