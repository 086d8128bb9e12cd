package foreground

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// A remote host's panes are inspected by a fixed script that the host's
// own tmux server runs (run-shell over the control connection tmux-mcp
// already holds: no new ssh process, no command built from a caller's
// arguments). tmux expands #{pane_pid}, #{pane_tty}, #{pid} and
// #{socket_path} in it for the target pane. The script dumps the same
// /proc files the local reader reads; since run-shell shows a command's
// output in the pane (view mode), the dump goes into a tmux buffer through
// the server's own binary (/proc/#{pid}/exe) and is read back with
// show-buffer in the same command list, and nothing is printed. The
// parser below turns the dump into a Snapshot, so remote answers are
// decided by the same code as local ones.
//
// The script holds no '#' but tmux's formats (a '#' would be a format to
// tmux) and ends with exit 0 (a failing run-shell also opens view mode).

// RemoteScript is the run-shell command that dumps the target pane's
// foreground facts into tmux buffer buffer (a name of letters, digits and
// '-', made by the caller).
func RemoteScript(buffer string) string {
	return `p=#{pane_pid}; t=#{q:pane_tty}; x=/proc/#{pid}/exe; s=#{q:socket_path}; b=` + buffer + `
d() {
 echo "pane $p $t"
 echo "arch $(uname -m)"
 read -r up rest < /proc/uptime && echo "uptime $up"
 echo "schednow $(grep exec_start /proc/self/sched)"
 echo "tty $(stat -L -c '%t %T %i %d' "$t")"
 echo "devtty $(stat -L -c '%i %d' /dev/tty)"
 echo "mode $(stty -g < "$t")"
 read -r l < /proc/$p/stat || { echo gone; return; }
 r=${l##*) }; set -- $r; tp=$6
 q=$p; all=; n=0
 while [ -n "$q" ] && [ $n -lt 200 ]; do
  set -- $q; q=
  for y; do
   n=$((n+1)); all="$all $y"
   for k in /proc/$y/task/*/children; do c=; read -r c < "$k"; q="$q $c"; done
  done
 done
 m=
 for y in $all $tp; do
  read -r l < /proc/$y/stat || continue
  echo "stat $l"
  r=${l##*) }; set -- $r
  [ "$3" = "$tp" ] && m="$m $y"
 done
 for y in $m; do
  grep -H . /proc/$y/task/*/stat /proc/$y/task/*/wchan /proc/$y/task/*/syscall /proc/$y/task/*/schedstat
  grep -H exec_start /proc/$y/task/*/sched
  grep -H '^tfd' /proc/$y/fdinfo/*
  ls -l /proc/$y/fd | while read -r l; do echo "fd $y $l"; done
  echo "cmdline $y $(tr '\000' '\n' < /proc/$y/cmdline | head -n 1)"
 done
}
d 2>/dev/null | "$x" -S "$s" load-buffer -b "$b" - >/dev/null 2>&1
exit 0`
}

// remoteProc gathers one process's lines of a dump.
type remoteProc struct {
	stat    statFields
	argv0   string
	threads map[int]*Thread
	tids    []int
	last    map[int]float64 // exec_start per thread
	fds     []FD
	fdsRead bool
	epoll   map[int]bool // fd -> holds the terminal
}

// ParseRemote decides a report from a dump RemoteScript wrote. pid is the
// pane's pid as the caller knows it (0 if unknown), for the answer when
// the dump is unusable.
func ParseRemote(dump []byte, pid int) Report {
	s := parseDump(dump, pid)
	r := decide(s)
	r.At = time.Now()
	return r
}

func parseDump(dump []byte, pid int) *Snapshot {
	s := &Snapshot{PanePID: pid, TicksPerSecond: 100}
	s.TTY.InQueue = -1
	procs := map[int]*remoteProc{}
	proc := func(pid int) *remoteProc {
		p := procs[pid]
		if p == nil {
			p = &remoteProc{threads: map[int]*Thread{}, last: map[int]float64{}, epoll: map[int]bool{}}
			p.stat.pid = -1
			procs[pid] = p
		}
		return p
	}
	ttyPath := ""
	gone, sawPane, sawTTY := false, false, false
	for _, line := range bytes.Split(dump, []byte("\n")) {
		tag, rest, _ := bytes.Cut(line, []byte(" "))
		switch string(tag) {
		case "pane":
			f := strings.Fields(string(rest))
			if len(f) == 2 {
				if v, err := strconv.Atoi(f[0]); err == nil {
					s.PanePID, ttyPath, sawPane = v, f[1], true
				}
			}
			continue
		case "arch":
			s.Arch = strings.TrimSpace(string(rest))
			continue
		case "uptime":
			s.BootSeconds, _ = strconv.ParseFloat(strings.TrimSpace(string(rest)), 64)
			continue
		case "schednow":
			s.NowSchedMS = execStart(rest)
			continue
		case "tty":
			f := strings.Fields(string(rest))
			if len(f) == 4 {
				maj, e1 := strconv.ParseUint(f[0], 16, 32)
				min, e2 := strconv.ParseUint(f[1], 16, 32)
				ino, e3 := strconv.ParseUint(f[2], 10, 64)
				dev, e4 := strconv.ParseUint(f[3], 10, 64)
				if e1 == nil && e2 == nil && e3 == nil && e4 == nil {
					s.TTY.Major, s.TTY.Minor, s.TTY.Ino = uint32(maj), uint32(min), ino
					s.TTY.DevMajor, s.TTY.DevMinor = linuxMajor(dev), linuxMinor(dev)
					sawTTY = true
				}
			}
			continue
		case "devtty":
			f := strings.Fields(string(rest))
			if len(f) == 2 {
				ino, e1 := strconv.ParseUint(f[0], 10, 64)
				dev, e2 := strconv.ParseUint(f[1], 10, 64)
				if e1 == nil && e2 == nil {
					s.TTY.DevTTYIno, s.TTY.DevTTYMajor, s.TTY.DevTTYMinor = ino, linuxMajor(dev), linuxMinor(dev)
				}
			}
			continue
		case "mode":
			// GNU and busybox stty -g: iflag:oflag:cflag:lflag:cc... in hex.
			f := strings.Split(strings.TrimSpace(string(rest)), ":")
			if len(f) > 4 {
				if lflag, err := strconv.ParseUint(f[3], 16, 32); err == nil {
					s.TTY.ModeKnown = true
					s.TTY.Canonical, s.TTY.Echo = lflag&linuxICANON != 0, lflag&linuxECHO != 0
				}
			}
			continue
		case "gone":
			gone = true
			continue
		case "stat":
			if f, ok := parseStat(rest); ok {
				proc(f.pid).stat = f
			}
			continue
		case "cmdline":
			p, name, _ := strings.Cut(string(rest), " ")
			if v, err := strconv.Atoi(p); err == nil {
				proc(v).argv0 = baseName(name)
			}
			continue
		case "fd":
			p, lsLine, _ := strings.Cut(string(rest), " ")
			v, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			rp := proc(v)
			rp.fdsRead = true
			if fd, target, ok := parseLsFD(lsLine); ok {
				rp.fds = append(rp.fds, FD{Num: fd, Kind: remoteKind(target, ttyPath)})
			}
			continue
		}
		// grep -H lines: /proc/PID/task/TID/FILE:content or
		// /proc/PID/fdinfo/N:tfd: ...
		path, content, ok := bytes.Cut(line, []byte(":"))
		if !ok || !bytes.HasPrefix(path, []byte("/proc/")) {
			continue
		}
		parts := strings.Split(string(path), "/")
		// "", "proc", PID, "task"|"fdinfo", TID|N, [FILE]
		if len(parts) < 5 {
			continue
		}
		pid, err1 := strconv.Atoi(parts[2])
		n, err2 := strconv.Atoi(parts[4])
		if err1 != nil || err2 != nil {
			continue
		}
		if parts[3] == "fdinfo" {
			rp := proc(pid)
			if epollTargetsHold(content, &s.TTY) {
				rp.epoll[n] = true
			} else if _, seen := rp.epoll[n]; !seen {
				rp.epoll[n] = false
			}
			continue
		}
		if parts[3] != "task" || len(parts) != 6 {
			continue
		}
		rp := proc(pid)
		th := rp.threads[n]
		if th == nil {
			th = &Thread{TID: n, Syscall: syscallUnknown}
			rp.threads[n] = th
			rp.tids = append(rp.tids, n)
		}
		switch parts[5] {
		case "stat":
			if f, ok := parseStat(content); ok {
				th.State = f.state
			}
		case "wchan":
			th.Wchan = strings.TrimSpace(string(content))
		case "syscall":
			th.Syscall, th.Args = parseSyscall(content)
		case "schedstat":
			th.Runs, th.CPUNanos, th.RunsKnown = parseSchedstat(content)
		case "sched":
			rp.last[n] = execStart(content)
		}
	}
	switch {
	case gone:
		s.Problem, s.Gone = "the pane's first process has exited", true
		return s
	case !sawPane || !sawTTY:
		s.Problem = "the host's dump of /proc is incomplete (no /proc, or stat and stty missing)"
		return s
	}
	root := procs[s.PanePID]
	if root == nil || root.stat.pid < 0 {
		s.Problem = "the host's dump of /proc is incomplete"
		return s
	}
	onTTY := func(f statFields) bool {
		return linuxMajor(f.ttyNr) == s.TTY.Major && linuxMinor(f.ttyNr) == s.TTY.Minor
	}
	if !onTTY(root.stat) {
		s.Problem = "the pane's pid is not on the pane's terminal there"
		return s
	}
	s.TPGID, s.PanePgrp, s.PaneName = root.stat.tpgid, root.stat.pgrp, root.stat.comm
	if s.TPGID <= 0 {
		s.Problem = "the terminal has no foreground process group"
		return s
	}
	last := map[[2]int]float64{}
	for pid, rp := range procs {
		f := rp.stat
		if f.pid < 0 || f.pgrp != s.TPGID || !onTTY(f) || f.state == 'Z' || f.state == 'X' {
			continue
		}
		p := &Proc{PID: pid, PPID: f.ppid, Pgrp: f.pgrp, Name: f.comm, StartTicks: f.start, FDsRead: rp.fdsRead}
		if rp.argv0 != "" {
			p.Name = rp.argv0
		}
		for i := range rp.fds {
			if rp.fds[i].Kind == fdEpoll {
				rp.fds[i].EpollRead = true // grep read every fdinfo: no tfd line, no target
				rp.fds[i].EpollTTY = rp.epoll[rp.fds[i].Num]
			}
		}
		p.FDs = rp.fds
		for _, tid := range rp.tids {
			p.Threads = append(p.Threads, rp.threads[tid])
			last[[2]int{pid, tid}] = rp.last[tid]
		}
		if len(p.Threads) == 0 {
			p.Threads = []*Thread{{TID: pid, State: f.state, Syscall: syscallUnknown}}
		}
		s.Members = append(s.Members, p)
	}
	// Map order is random: the leader first, then by pid.
	sortProcs(s.Members, s.TPGID)
	s.lastRan = func(pid, tid int) float64 { return last[[2]int{pid, tid}] }
	return s
}

// Linux's c_lflag bits (asm-generic termbits), for a remote Linux host's
// stty -g.
const (
	linuxICANON = 0x2
	linuxECHO   = 0x8
)

// parseLsFD takes a line of ls -l /proc/PID/fd: "lrwx------ 1 u g 64 Dec
// 3 14:05 3 -> /dev/pts/7".
func parseLsFD(l string) (int, string, bool) {
	left, target, ok := strings.Cut(l, " -> ")
	if !ok {
		return 0, "", false
	}
	f := strings.Fields(left)
	if len(f) == 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return 0, "", false
	}
	return n, target, true
}

// remoteKind sorts a remote open file by its link text (no stat there).
func remoteKind(target, tty string) FDKind {
	switch {
	case target == tty:
		return fdTTY
	case target == "/dev/tty":
		return fdDevTTY
	case strings.HasPrefix(target, "socket:"):
		return fdSocket
	case strings.HasPrefix(target, "pipe:"):
		return fdPipe
	case target == "anon_inode:[eventpoll]":
		return fdEpoll
	case target == "anon_inode:inotify":
		return fdInotify
	case strings.HasPrefix(target, "anon_inode:"):
		return fdEvent
	case strings.HasPrefix(target, "/dev/pts/"), strings.HasPrefix(target, "/dev/tty"), target == "/dev/console":
		return fdOtherTTY
	}
	return fdOther
}

func sortProcs(ps []*Proc, leader int) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && less(ps[j], ps[j-1], leader); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

func less(a, b *Proc, leader int) bool {
	if (a.PID == leader) != (b.PID == leader) {
		return a.PID == leader
	}
	return a.PID < b.PID
}
