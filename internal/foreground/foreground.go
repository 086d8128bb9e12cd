// Package foreground tells what the foreground program of a terminal is
// doing: waiting for input on that terminal, running, asleep on something
// else, stopped, or gone. It asks the operating system, not the screen: the
// terminal's foreground process group, the state of every thread of every
// member and what each blocked thread waits in, and the terminal's modes.
//
// Agents act on the answer ("the REPL is ready, type the next line"), so a
// wrong "waiting" is worse than a late one: the package says "exact" only
// when the kernel's own record names the terminal, "inferred" when the
// answer rests on the terminal's modes and the files a program holds, and
// "unknown" when it cannot tell. Nothing here needs ptrace attach rights:
// /proc/PID/task/TID/syscall is read when readable (it makes more answers
// exact) but every state is also decided without it.
//
// It knows nothing of tmux: a caller names a pane by the pid of its first
// process and the path of its terminal, as tmux reports them.
package foreground

import (
	"fmt"
	"time"
)

// State is what the foreground of a terminal is doing.
type State string

// The states, as they appear in answers.
const (
	// WaitingForInput: the foreground group is blocked reading the
	// terminal and nothing in it is runnable: typed input goes to it.
	WaitingForInput State = "waiting_for_input"
	// Running: a thread of the foreground group is running or runnable.
	Running State = "running"
	// Sleeping: blocked on something other than the terminal (a timer, a
	// socket, a pipe, a child).
	Sleeping State = "sleeping"
	// Stopped: the foreground group is stopped (SIGSTOP, SIGTSTP) and its
	// parent has not taken the terminal back.
	Stopped State = "stopped"
	// Exited: the pane's program has ended.
	Exited State = "exited"
	// Unknown: the platform or the permissions cannot tell.
	Unknown State = "unknown"
)

// Basis says how a state was decided.
type Basis string

const (
	// Exact: the kernel's record says it (a thread state, the system call
	// a thread is blocked in and its file, the wait channel that only the
	// terminal's read path uses, an epoll set holding the terminal).
	Exact Basis = "exact"
	// Inferred: a select/poll while holding the terminal, decided from
	// the terminal's modes and what else the program holds.
	Inferred Basis = "inferred"
)

// Target names a terminal: the pid of the pane's first process and the
// path of its terminal (tmux's #{pane_pid} and #{pane_tty}).
type Target struct {
	PanePID int
	TTY     string
}

// Report is the answer for one terminal.
type Report struct {
	// PID and Command are the foreground process group's leader (or, when
	// the leader is gone, its first live member), Command as tmux names it
	// (argv[0]'s base name).
	PID     int
	Command string
	State   State
	// StateSeconds is how long the group has been in State: for a blocked
	// group, since it last ran (the scheduler's record); for a running one,
	// since it was first seen running, at most since it started.
	StateSeconds float64
	// Secret: the terminal is canonical with echo off, as getpass and
	// read -s leave it; readline and full-screen programs turn canonical
	// mode off as well and are not secret.
	Secret bool
	Basis  Basis
	// Why says in a few words what decided the state ("read(0) on the
	// terminal", "nanosleep", "pid not on this terminal"): for logs, tests
	// and docs, not for agents.
	Why string

	// Pgrp is the foreground process group; 0 when unknown.
	Pgrp int
	// Runs counts the times the group's threads were scheduled, summed;
	// two reports of one Pgrp with different Runs mean it ran in between
	// (e.g. it woke to read typed input). 0 when unknown.
	Runs uint64
	// InputQueued is the number of typed bytes the terminal holds that no
	// program has read yet (in canonical mode: of complete lines); -1 when
	// unknown.
	InputQueued int
	// ShellAtPrompt is true when the foreground group is the pane's first
	// process's own group: a shell in the pane has the terminal back.
	ShellAtPrompt bool
	// PaneProgram is the name of the pane's first process (its comm).
	PaneProgram string
	// Threads counts the group's threads, over all its members: above one,
	// work can pass between them (a runtime's worker hands its result to
	// the thread that reads the terminal) while each looks blocked.
	Threads int
	// ReadingTTY: a thread of the group is blocked reading the terminal,
	// whatever the others do (a REPL whose garbage collector runs is
	// running, yet typed input goes to it).
	ReadingTTY bool
	// Written is the bytes the group's members have written (wchar of
	// /proc/PID/io, to any file), and Writers names those members; both
	// are set only where read (locally, on Linux). A caller that sees the
	// same writers write no more than it received from the terminal knows
	// it has received all they wrote.
	Written uint64
	Writers string
	// Canonical: the terminal is in canonical mode (the kernel echoes
	// typed lines itself); known only with ModeKnown.
	Canonical, ModeKnown bool
	// At is when the facts were read.
	At time.Time
}

func (r Report) String() string {
	return fmt.Sprintf("%s (%s, pid %d %s: %s)", r.State, r.Basis, r.PID, r.Command, r.Why)
}

// ExitedReport is the report for a pane whose program has ended, which the
// caller knows from tmux (#{pane_dead}) rather than from the OS.
func ExitedReport(pid int, command string) Report {
	return Report{PID: pid, Command: command, State: Exited, Basis: Exact, Why: "the pane's program has exited", InputQueued: -1, At: time.Now()}
}

func unknownReport(pid int, why string) Report {
	return Report{PID: pid, State: Unknown, Basis: Inferred, Why: why, InputQueued: -1, At: time.Now()}
}

// Options tune an inspection.
type Options struct {
	// NoSyscall ignores /proc/PID/task/TID/syscall even where it is
	// readable: the answers a user without ptrace attach rights gets
	// (Yama ptrace_scope=1, another user's process); for tests.
	NoSyscall bool
	// ProcRoot is the proc file system's mount point; "" is /proc.
	ProcRoot string
}
