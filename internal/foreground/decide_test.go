package foreground

import (
	"strings"
	"testing"
)

// snap builds a snapshot of one foreground process with the given threads
// and files on a terminal in the given mode.
func snap(canonical, echo bool, fds []FD, threads ...*Thread) *Snapshot {
	p := &Proc{PID: 100, Pgrp: 100, Name: "prog", Threads: threads, FDs: fds, FDsRead: fds != nil}
	return &Snapshot{Arch: "x86_64", PanePID: 50, PanePgrp: 50, TPGID: 100, Members: []*Proc{p},
		TTY: TTYFacts{ModeKnown: true, Canonical: canonical, Echo: echo, InQueue: 0}}
}

func th(state byte, wchan string, syscall int, args ...uint64) *Thread {
	t := &Thread{TID: 100, State: state, Wchan: wchan, Syscall: syscall}
	copy(t.Args[:], args)
	return t
}

var (
	ttyFDs    = []FD{{Num: 0, Kind: fdTTY}, {Num: 1, Kind: fdTTY}, {Num: 2, Kind: fdTTY}}
	socketFDs = []FD{{Num: 0, Kind: fdTTY}, {Num: 1, Kind: fdTTY}, {Num: 2, Kind: fdTTY}, {Num: 3, Kind: fdSocket}}
	epollTTY  = []FD{{Num: 0, Kind: fdTTY}, {Num: 7, Kind: fdEpoll, EpollRead: true, EpollTTY: true}}
	epollNone = []FD{{Num: 0, Kind: fdTTY}, {Num: 7, Kind: fdEpoll, EpollRead: true}}
	twoEpolls = []FD{{Num: 0, Kind: fdTTY}, {Num: 7, Kind: fdEpoll, EpollRead: true, EpollTTY: true}, {Num: 8, Kind: fdEpoll, EpollRead: true}}
)

// TestDecide: each rule of the decision, on synthetic snapshots.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      *Snapshot
		state  State
		basis  Basis
		secret bool
	}{
		{"read on the terminal (syscall)", snap(true, true, ttyFDs, th('S', "wait_woken", 0, 0)), WaitingForInput, Exact, false},
		{"read on a socket (syscall)", snap(true, true, socketFDs, th('S', "wait_woken", 0, 3)), Sleeping, Exact, false},
		{"read -s: canonical, echo off", snap(true, false, ttyFDs, th('S', "wait_woken", 0, 0)), WaitingForInput, Exact, true},
		{"readline: raw, echo off, not secret", snap(false, false, ttyFDs, th('S', "poll_schedule_timeout.constprop.0", 270, 1)), WaitingForInput, Inferred, false},
		{"wait_woken without syscall, only the terminal", snap(true, true, ttyFDs, th('S', "wait_woken", syscallUnknown)), WaitingForInput, Exact, false},
		{"wait_woken without syscall, a socket too, cooked", snap(true, true, socketFDs, th('S', "wait_woken", syscallUnknown)), Sleeping, Inferred, false},
		{"n_tty_read", snap(true, true, nil, th('S', "n_tty_read", syscallUnknown)), WaitingForInput, Exact, false},
		{"epoll on a set holding the terminal", snap(false, false, epollTTY, th('S', "do_epoll_wait", 281, 7)), WaitingForInput, Exact, false},
		{"epoll on a set without it", snap(false, false, epollNone, th('S', "do_epoll_wait", 281, 7)), Sleeping, Exact, false},
		{"epoll without syscall, one set holding it", snap(false, false, epollTTY, th('S', "do_epoll_wait", syscallUnknown)), WaitingForInput, Exact, false},
		{"epoll without syscall, two sets", snap(false, false, twoEpolls, th('S', "do_epoll_wait", syscallUnknown)), WaitingForInput, Inferred, false},
		{"select with no files is a sleep", snap(false, false, ttyFDs, th('S', "poll_schedule_timeout", 23, 0)), Sleeping, Exact, false},
		{"select below the terminal's fd", snap(false, false, []FD{{Num: 5, Kind: fdTTY}, {Num: 3, Kind: fdPipe}}, th('S', "poll_schedule_timeout", 23, 4)), Sleeping, Exact, false},
		{"poll, cooked, a socket too: curl", snap(true, true, socketFDs, th('S', "poll_schedule_timeout", 7, 0, 1)), Sleeping, Inferred, false},
		{"poll, cooked, only the terminal", snap(true, true, ttyFDs, th('S', "poll_schedule_timeout", 7, 0, 1)), WaitingForInput, Inferred, false},
		{"poll without the terminal open", snap(false, false, []FD{{Num: 3, Kind: fdSocket}}, th('S', "poll_schedule_timeout", 7, 0, 1)), Sleeping, Exact, false},
		{"nanosleep", snap(true, true, ttyFDs, th('S', "hrtimer_nanosleep", 230)), Sleeping, Exact, false},
		{"runnable", snap(true, true, ttyFDs, th('R', "", syscallNone)), Running, Exact, false},
		{"stopped", snap(true, true, ttyFDs, th('T', "do_signal_stop", syscallUnknown)), Stopped, Exact, false},
		{"uninterruptible", snap(true, true, ttyFDs, th('D', "io_schedule", syscallUnknown)), Sleeping, Exact, false},
		{"a reader and a runnable helper thread", snap(false, false, epollTTY, th('S', "do_epoll_wait", 281, 7), &Thread{TID: 101, State: 'R', Syscall: syscallNone}), Running, Exact, false},
		{"files unreadable, raw mode", snap(false, false, nil, th('S', "poll_schedule_timeout", syscallUnknown)), WaitingForInput, Inferred, false},
		{"files unreadable, cooked", snap(true, true, nil, th('S', "poll_schedule_timeout", syscallUnknown)), Sleeping, Inferred, false},
		{"unknown wait channel", snap(true, true, ttyFDs, th('S', "", syscallUnknown)), Sleeping, Inferred, false},
		{"BSD ttyin", snap(true, true, nil, th('S', "ttyin", syscallUnknown)), WaitingForInput, Exact, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decide(tc.s)
			if r.State != tc.state || r.Basis != tc.basis || r.Secret != tc.secret {
				t.Errorf("got %s/%s secret=%v (%s), want %s/%s secret=%v", r.State, r.Basis, r.Secret, r.Why, tc.state, tc.basis, tc.secret)
			}
			if r.Why == "" {
				t.Errorf("no reason given")
			}
		})
	}
}

// TestDecideQueuedInput: a reader with typed bytes waiting is about to
// wake: running, not waiting.
func TestDecideQueuedInput(t *testing.T) {
	s := snap(true, true, ttyFDs, th('S', "wait_woken", 0, 0))
	s.TTY.InQueue = 4
	if r := decide(s); r.State != Running || !r.ReadingTTY {
		t.Fatalf("%v", r)
	}
}

// TestDecideRecheck: a reader whose scheduling count moved during the
// inspection ran (it took input): running.
func TestDecideRecheck(t *testing.T) {
	s := snap(false, false, ttyFDs, th('S', "poll_schedule_timeout", 270, 1))
	s.Members[0].Threads[0].RunsKnown = true
	s.recheck = func([]threadRef) (bool, bool) { return true, true }
	if r := decide(s); r.State != Running {
		t.Fatalf("%v", r)
	}
	s.recheck = func([]threadRef) (bool, bool) { return false, true }
	if r := decide(s); r.State != WaitingForInput {
		t.Fatalf("%v", r)
	}
}

// TestDecideProblems: what cannot be read is unknown, a gone process is
// exited; the leader names the report.
func TestDecideProblems(t *testing.T) {
	if r := decide(&Snapshot{PanePID: 9, Problem: "pid not on this terminal"}); r.State != Unknown || !strings.Contains(r.Why, "terminal") {
		t.Fatalf("%v", r)
	}
	if r := decide(&Snapshot{PanePID: 9, Problem: "gone", Gone: true}); r.State != Exited || r.Basis != Exact {
		t.Fatalf("%v", r)
	}
	s := snap(true, true, ttyFDs, th('S', "hrtimer_nanosleep", 230))
	s.Members = append([]*Proc{{PID: 101, Pgrp: 100, Name: "child", Threads: []*Thread{th('S', "pipe_read", syscallUnknown)}}}, s.Members...)
	if r := decide(s); r.PID != 100 || r.Command != "prog" {
		t.Fatalf("the leader must name the report: %v", r)
	}
	// A group whose members all exited: its parent takes the terminal back.
	empty := &Snapshot{PanePID: 5, PanePgrp: 5, TPGID: 100}
	if r := decide(empty); r.State != Running || r.Basis != Inferred {
		t.Fatalf("%v", r)
	}
}

// TestRunningSeconds: a running group's figure is bounded by its newest
// member's age and its busiest member's CPU time.
func TestRunningSeconds(t *testing.T) {
	s := snap(true, true, ttyFDs, &Thread{TID: 100, State: 'R', Syscall: syscallNone, RunsKnown: true, CPUNanos: 1_500_000_000})
	s.BootSeconds, s.TicksPerSecond = 1000, 100
	s.Members[0].StartTicks = 100 * 400 // started 600 s ago
	if r := decide(s); r.StateSeconds != 1.5 {
		t.Fatalf("CPU-bound figure: %v", r.StateSeconds)
	}
	s.Members[0].Threads[0].CPUNanos = 900_000_000_000
	if r := decide(s); r.StateSeconds != 600 {
		t.Fatalf("age-bound figure: %v", r.StateSeconds)
	}
}
