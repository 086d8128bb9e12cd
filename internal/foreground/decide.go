package foreground

import (
	"fmt"
	"strings"
)

// verdict is what one thread is doing.
type verdict int

const (
	vIgnore  verdict = iota // a zombie or dead thread: no say
	vRunning                // running or runnable
	vStopped                // stopped by a signal or a tracer
	vTTY                    // blocked reading the terminal
	vOther                  // blocked on something else
)

type threadVerdict struct {
	v     verdict
	basis Basis
	why   string
	p     *Proc
	t     *Thread
}

// decide turns a snapshot into a report. It reads nothing but the snapshot
// and the loaders the snapshot carries.
func decide(s *Snapshot) Report {
	if s.Problem != "" {
		r := unknownReport(s.PanePID, s.Problem)
		if s.Gone {
			r.State, r.Basis = Exited, Exact
		}
		return r
	}
	r := Report{Pgrp: s.TPGID, InputQueued: s.TTY.InQueue, ShellAtPrompt: s.PanePgrp == s.TPGID && s.TPGID > 0, PaneProgram: s.PaneName}
	r.Secret = s.TTY.ModeKnown && s.TTY.Canonical && !s.TTY.Echo
	r.ModeKnown, r.Canonical = s.TTY.ModeKnown, s.TTY.Canonical
	if s.written != nil {
		r.Written, r.Writers = s.written(s.Members)
	}
	var lead *Proc
	for _, p := range s.Members {
		if lead == nil || p.PID == s.TPGID {
			lead = p
		}
		r.Threads += len(p.Threads)
	}
	if lead == nil {
		// The group has no live member on this terminal: its last process
		// has just ended and the shell has not taken the terminal back.
		r.PID, r.State, r.Basis, r.Why = s.TPGID, Running, Inferred, "the foreground group has just ended; its parent is taking the terminal back"
		if r.PID <= 0 {
			r.PID = s.PanePID
		}
		return r
	}
	r.PID, r.Command = lead.PID, lead.Name

	// Threads are classified main thread first; once one is known to
	// read the terminal for certain, the other sleeping threads only need
	// their state letter (runnable or stopped would still count), not
	// what they wait in: a Node runtime's ten workers cost nothing more.
	var verdicts []threadVerdict
	reader := false
	for _, p := range s.Members {
		for _, t := range p.Threads {
			if reader && t.State != 'R' && t.State != 'T' && t.State != 't' && t.State != 'Z' && t.State != 'X' && t.State != 'x' {
				verdicts = append(verdicts, threadVerdict{v: vOther, basis: Exact, why: "a thread beside the reader", p: p, t: t})
				continue
			}
			tv := classifyThread(s, p, t)
			if tv.v == vIgnore {
				continue
			}
			verdicts = append(verdicts, tv)
			reader = reader || (tv.v == vTTY && tv.basis == Exact)
		}
	}
	pick := func(v verdict) []threadVerdict {
		var out []threadVerdict
		for _, tv := range verdicts {
			if tv.v == v {
				out = append(out, tv)
			}
		}
		return out
	}
	r.ReadingTTY = len(pick(vTTY)) > 0
	// Runs counts the threads that read the terminal (all, when none
	// does): a helper thread's work must not look like input taken.
	counted := pick(vTTY)
	if len(counted) == 0 {
		counted = verdicts
	}
	for _, tv := range counted {
		s.runs(tv.p, tv.t)
		r.Runs += tv.t.Runs
	}
	switch {
	case len(verdicts) == 0:
		r.State, r.Basis, r.Why = Running, Inferred, "every thread of the foreground group is exiting"
	case len(pick(vRunning)) > 0:
		tv := pick(vRunning)[0]
		r.State, r.Basis, r.Why = Running, Exact, fmt.Sprintf("thread %d of %s is runnable", tv.t.TID, tv.p.Name)
	case len(pick(vTTY)) > 0:
		tty := pick(vTTY)
		best := tty[0]
		for _, tv := range tty {
			if tv.basis == Exact {
				best = tv
				break
			}
		}
		r.State, r.Basis, r.Why = WaitingForInput, best.basis, best.why
		if s.TTY.InQueue > 0 {
			// Typed input is there to read: the reader is being woken.
			r.State, r.Basis, r.Why = Running, Exact, fmt.Sprintf("%d typed bytes are waiting to be read", s.TTY.InQueue)
		} else if s.recheck != nil {
			// Ran since the snapshot (woke to read input that arrived
			// meanwhile): not waiting any more.
			if changed, ok := s.recheck(s.refs(tty)); ok && changed {
				r.State, r.Basis, r.Why = Running, Exact, "the reading thread ran during the inspection"
			}
		}
		if r.State == WaitingForInput {
			r.StateSeconds = s.secondsSinceRan(tty)
		}
	case len(pick(vStopped)) > 0:
		tv := pick(vStopped)[0]
		r.State, r.Basis, r.Why = Stopped, Exact, fmt.Sprintf("%s (pid %d) is stopped", tv.p.Name, tv.p.PID)
		r.StateSeconds = s.secondsSinceRan(verdicts)
	default:
		r.State, r.Basis = Sleeping, Exact
		var whys []string
		for _, tv := range verdicts {
			if tv.basis == Inferred {
				r.Basis = Inferred
			}
			if len(whys) < 3 && !contains(whys, tv.why) {
				whys = append(whys, tv.why)
			}
		}
		r.Why = strings.Join(whys, "; ")
		if s.recheck != nil {
			if changed, ok := s.recheck(s.refs(verdicts)); ok && changed {
				r.State, r.Basis, r.Why = Running, Exact, "a thread ran during the inspection"
			}
		}
		if r.State == Sleeping {
			r.StateSeconds = s.secondsSinceRan(verdicts)
		}
	}
	if r.State == Running {
		r.StateSeconds = s.runningSeconds()
	}
	return r
}

// runningSeconds bounds how long a running group has run: no longer than
// since its newest member started, nor than the CPU time its busiest
// member used (a REPL idle for an hour that computes for a second has used
// a second). A Tracker narrows it with what it saw.
func (s *Snapshot) runningSeconds() float64 {
	bound := -1.0
	if s.BootSeconds > 0 && s.TicksPerSecond > 0 {
		var newest uint64
		for _, p := range s.Members {
			newest = max(newest, p.StartTicks)
		}
		bound = max(0, s.BootSeconds-float64(newest)/s.TicksPerSecond)
	}
	var busiest uint64
	known := false
	for _, p := range s.Members {
		var sum uint64
		for _, t := range p.Threads {
			s.runs(p, t)
			if t.RunsKnown {
				sum += t.CPUNanos
				known = true
			}
		}
		busiest = max(busiest, sum)
	}
	if known && (bound < 0 || float64(busiest)/1e9 < bound) {
		bound = float64(busiest) / 1e9
	}
	return roundSeconds(max(bound, 0))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Snapshot) refs(tvs []threadVerdict) []threadRef {
	out := make([]threadRef, 0, len(tvs))
	for _, tv := range tvs {
		s.runs(tv.p, tv.t)
		if tv.t.RunsKnown {
			out = append(out, threadRef{pid: tv.p.PID, tid: tv.t.TID, runs: tv.t.Runs})
		}
	}
	return out
}

// secondsSinceRan is how long ago the most recent of the threads last ran
// (of the first 16: every thread of a big program would cost too much to
// read). 0 when the scheduler's record is missing.
func (s *Snapshot) secondsSinceRan(tvs []threadVerdict) float64 {
	if s.lastRan == nil {
		return 0
	}
	best := -1.0
	for i, tv := range tvs {
		if i == 16 {
			break
		}
		if since := s.sinceSched(s.lastRan(tv.p.PID, tv.t.TID)); since >= 0 && (best < 0 || since < best) {
			best = since
		}
	}
	return roundSeconds(max(best, 0))
}

// classifyThread decides what one thread is doing.
func classifyThread(s *Snapshot, p *Proc, t *Thread) threadVerdict {
	tv := threadVerdict{p: p, t: t, basis: Exact}
	if s.loadWait != nil && t.State != 'R' {
		s.loadWait(p, t)
	}
	switch t.State {
	case 'R':
		tv.v, tv.why = vRunning, "runnable"
		return tv
	case 'T', 't':
		tv.v, tv.why = vStopped, "stopped"
		return tv
	case 'Z', 'X', 'x':
		tv.v = vIgnore
		return tv
	case 'D':
		tv.v, tv.why = vOther, "uninterruptible wait in "+wchanName(t.Wchan)
		return tv
	}
	if t.Syscall >= 0 {
		if c, known := classify(s.Arch, t.Syscall); known {
			if done, out := s.bySyscall(p, t, c); done {
				return out
			}
		}
	}
	return s.byWchan(p, t)
}

// bySyscall decides from the system call a thread is blocked in; done is
// false when the call's files cannot be read (the wait channel decides).
func (s *Snapshot) bySyscall(p *Proc, t *Thread, c syscallClass) (bool, threadVerdict) {
	tv := threadVerdict{p: p, t: t, basis: Exact}
	switch c {
	case scRead:
		fd := int(t.Args[0])
		f, ok := s.fd(p, fd)
		if !ok {
			return false, tv
		}
		kind := f.Kind
		if kind == fdTTY || kind == fdDevTTY {
			tv.v, tv.why = vTTY, fmt.Sprintf("read(%d) on the terminal", fd)
		} else {
			tv.v, tv.why = vOther, fmt.Sprintf("read(%d) on %s", fd, kindName(kind))
		}
		return true, tv
	case scEpoll:
		epfd := int(t.Args[0])
		f, ok := s.fd(p, epfd)
		if !ok || f.Kind != fdEpoll || !f.EpollRead {
			return false, tv
		}
		if f.EpollTTY {
			tv.v, tv.why = vTTY, "epoll_wait on a set holding the terminal"
		} else {
			tv.v, tv.why = vOther, "epoll_wait on a set without the terminal"
		}
		return true, tv
	case scSelect, scPselect:
		nfds := int(t.Args[0])
		if nfds == 0 {
			tv.v, tv.why = vOther, "select with no files (a timed sleep)"
			return true, tv
		}
		if fds, ok := s.fds(p); ok {
			inSet := false
			for _, f := range fds {
				if (f.Kind == fdTTY || f.Kind == fdDevTTY) && f.Num < nfds {
					inSet = true
				}
			}
			if !inSet {
				tv.v, tv.why = vOther, "select on files other than the terminal"
				return true, tv
			}
		}
		return true, s.pollInference(p, t, "select")
	case scPoll:
		if t.Args[1] == 0 {
			tv.v, tv.why = vOther, "poll with no files (a timed sleep)"
			return true, tv
		}
		return true, s.pollInference(p, t, "poll")
	case scUring:
		return true, s.pollInference(p, t, "io_uring")
	}
	tv.v, tv.why = vOther, "blocked in "+wchanName(t.Wchan)
	if t.Wchan == "" {
		tv.why = fmt.Sprintf("blocked in system call %d", t.Syscall)
	}
	return true, tv
}

// byWchan decides from the kernel function a thread sleeps in, and the
// files its process holds.
func (s *Snapshot) byWchan(p *Proc, t *Thread) threadVerdict {
	tv := threadVerdict{p: p, t: t, basis: Exact}
	w := wchanName(t.Wchan)
	switch w {
	case "n_tty_read":
		tv.v, tv.why = vTTY, "reading the terminal (n_tty_read)"
		return tv
	case "wait_woken":
		// The terminal's read path sleeps here, and so do sockets, inotify
		// and a write to a full terminal: the files decide.
		fds, ok := s.fds(p)
		if !ok {
			return s.modeGuess(p, t, "wait_woken")
		}
		holds, others := 0, 0
		for _, f := range fds {
			switch f.Kind {
			case fdTTY, fdDevTTY:
				holds++
			case fdSocket, fdInotify, fdOtherTTY:
				others++
			}
		}
		switch {
		case holds > 0 && others == 0:
			tv.v, tv.why = vTTY, "reading the terminal (wait_woken; the terminal is the only file it can wait on there)"
		case holds == 0:
			tv.v, tv.why = vOther, "wait_woken on a socket or inotify"
		default:
			return s.modeGuess(p, t, "wait_woken with sockets or other terminals open")
		}
		return tv
	case "do_epoll_wait", "ep_poll":
		fds, ok := s.fds(p)
		if !ok {
			return s.modeGuess(p, t, "epoll_wait")
		}
		sets, withTTY, unread := 0, 0, 0
		for _, f := range fds {
			if f.Kind != fdEpoll {
				continue
			}
			sets++
			if !f.EpollRead {
				unread++
			} else if f.EpollTTY {
				withTTY++
			}
		}
		switch {
		case withTTY == 0 && unread == 0:
			tv.v, tv.why = vOther, "epoll_wait; no epoll set of the process holds the terminal"
		case withTTY == 1 && sets == 1:
			tv.v, tv.why = vTTY, "epoll_wait on the process's only epoll set, which holds the terminal"
		default:
			tv.v, tv.basis, tv.why = vTTY, Inferred, "epoll_wait; one of the process's epoll sets holds the terminal"
		}
		return tv
	case "poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll", "do_poll":
		return s.pollInference(p, t, "select/poll")
	case "do_signal_stop":
		tv.v, tv.why = vStopped, "stopped"
		return tv
	case "ttyin": // BSD and macOS: sleeping in the terminal's read
		tv.v, tv.why = vTTY, "reading the terminal (ttyin)"
		return tv
	case "select", "kqread", "poll": // BSD and macOS
		return s.pollInference(p, t, w)
	case "", "0":
		return s.modeGuess(p, t, "an unknown kernel wait")
	}
	tv.v, tv.why = vOther, "blocked in "+w
	return tv
}

// pollInference decides a select/poll (or a wait whose files cannot be
// seen) from what the process holds and the terminal's mode: a program
// that switched the terminal out of canonical mode reads keys itself; in
// canonical mode, one that can wait on nothing but the terminal waits on
// it.
func (s *Snapshot) pollInference(p *Proc, t *Thread, what string) threadVerdict {
	tv := threadVerdict{p: p, t: t, basis: Inferred}
	fds, ok := s.fds(p)
	if ok {
		holds, others := 0, 0
		for _, f := range fds {
			switch f.Kind {
			case fdTTY, fdDevTTY:
				holds++
			case fdSocket, fdPipe, fdEpoll, fdInotify, fdEvent, fdOtherTTY:
				others++
			}
		}
		switch {
		case holds == 0:
			tv.v, tv.basis, tv.why = vOther, Exact, what+" without the terminal open"
			return tv
		case s.TTY.ModeKnown && !s.TTY.Canonical:
			tv.v, tv.why = vTTY, what+" holding the terminal, which it set to raw/cbreak mode"
			return tv
		case others == 0:
			tv.v, tv.why = vTTY, what+"; the terminal is the only file it can wait on"
			return tv
		}
		tv.v, tv.why = vOther, fmt.Sprintf("%s on the terminal and %d other files, terminal in canonical mode", what, others)
		return tv
	}
	return s.modeGuess(p, t, what)
}

// modeGuess decides from the terminal's mode alone, when the files are
// unreadable.
func (s *Snapshot) modeGuess(p *Proc, t *Thread, what string) threadVerdict {
	tv := threadVerdict{p: p, t: t, basis: Inferred}
	if s.TTY.ModeKnown && !s.TTY.Canonical {
		tv.v, tv.why = vTTY, what+", terminal in raw/cbreak mode (files unreadable)"
	} else {
		tv.v, tv.why = vOther, what+" (files unreadable)"
	}
	return tv
}

// wchanName drops the compiler's suffixes (.constprop.0, .isra.0).
func wchanName(w string) string {
	w = strings.TrimSpace(w)
	if i := strings.IndexByte(w, '.'); i > 0 {
		w = w[:i]
	}
	return w
}

func kindName(k FDKind) string {
	switch k {
	case fdTTY, fdDevTTY:
		return "the terminal"
	case fdOtherTTY:
		return "another terminal"
	case fdSocket:
		return "a socket"
	case fdPipe:
		return "a pipe"
	case fdEpoll:
		return "an epoll set"
	case fdInotify:
		return "inotify"
	case fdEvent:
		return "an event file"
	}
	return "a file"
}

// wchanAmbiguous: a wait channel that does not say what the thread waits
// on (the terminal or something else): the system call must say.
func wchanAmbiguous(w string) bool {
	switch wchanName(w) {
	case "wait_woken", "do_epoll_wait", "ep_poll", "poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll", "do_poll", "", "0":
		return true
	}
	return false
}
