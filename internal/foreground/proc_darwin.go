//go:build darwin

package foreground

import (
	"bytes"
	"time"

	"golang.org/x/sys/unix"
)

// Inspect reports what the foreground of the terminal t is doing, from the
// kernel's process table (sysctl kern.proc, kinfo_proc: the controlling
// terminal, its foreground process group, each member's state and wait
// message such as "ttyin") and the terminal's modes. It spawns nothing.
// macOS keeps one state and wait message per process, not per thread, and
// a process's open files are not in kinfo_proc: a select or kevent wait is
// decided from the terminal's mode alone (inferred).
func Inspect(t Target, o Options) Report {
	s := collectDarwin(t)
	r := decide(s)
	r.At = time.Now()
	return r
}

// Supported reports whether Inspect can answer on this platform.
func Supported() bool { return true }

// fionread is FIONREAD, _IOR('f', 127, int) (sys/filio.h), which x/sys
// does not define for darwin.
const fionread = 0x4004667f

// BSD process states (sys/proc.h).
const (
	bsdSIDL  = 1
	bsdSRUN  = 2
	bsdSSLP  = 3
	bsdSSTOP = 4
	bsdSZOMB = 5
)

func collectDarwin(t Target) *Snapshot {
	s := &Snapshot{PanePID: t.PanePID}
	s.TTY.InQueue = -1
	var st unix.Stat_t
	if err := unix.Stat(t.TTY, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		s.Problem = "the pane's terminal " + t.TTY + " cannot be read here"
		return s
	}
	rdev := uint64(st.Rdev)
	s.TTY.Major, s.TTY.Minor = unix.Major(rdev), unix.Minor(rdev)
	root, err := unix.SysctlKinfoProc("kern.proc.pid", t.PanePID)
	if err != nil || root == nil || root.Proc.P_pid != int32(t.PanePID) {
		s.Problem, s.Gone = "the pane's first process has exited", true
		return s
	}
	if uint64(uint32(root.Eproc.Tdev)) != rdev&0xffffffff {
		s.Problem = "the pane's pid is not on the pane's terminal here"
		return s
	}
	s.TPGID, s.PanePgrp = int(root.Eproc.Tpgid), int(root.Eproc.Pgid)
	s.PaneName = cString(root.Proc.P_comm[:])
	if s.TPGID <= 0 {
		s.Problem = "the terminal has no foreground process group"
		return s
	}
	members, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", s.TPGID)
	if err != nil {
		s.Problem = "cannot read the foreground process group: " + err.Error()
		return s
	}
	for i := range members {
		k := &members[i]
		if uint64(uint32(k.Eproc.Tdev)) != rdev&0xffffffff {
			continue
		}
		th := &Thread{TID: int(k.Proc.P_pid), Syscall: syscallUnknown, Wchan: cString(k.Eproc.Wmesg[:])}
		switch k.Proc.P_stat {
		case bsdSZOMB:
			continue
		case bsdSSTOP:
			th.State = 'T'
		case bsdSSLP:
			th.State = 'S'
		case bsdSRUN, bsdSIDL:
			th.State = 'R'
			if th.Wchan != "" {
				th.State = 'S' // runnable process with a sleeping thread's wait message
			}
		}
		s.Members = append(s.Members, &Proc{PID: int(k.Proc.P_pid), Pgrp: int(k.Eproc.Pgid), Name: cString(k.Proc.P_comm[:]), Threads: []*Thread{th}})
	}
	sortProcs(s.Members, s.TPGID)
	fd, err := unix.Open(t.TTY, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		if tio, err := unix.IoctlGetTermios(fd, unix.TIOCGETA); err == nil {
			s.TTY.ModeKnown = true
			s.TTY.Canonical = tio.Lflag&unix.ICANON != 0
			s.TTY.Echo = tio.Lflag&unix.ECHO != 0
		}
		if n, err := unix.IoctlGetInt(fd, fionread); err == nil {
			s.TTY.InQueue = n
		}
		unix.Close(fd)
	}
	return s
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
