package foreground

import (
	"bytes"
	"strconv"
)

// The parsers of /proc files, shared by the local reader (Linux) and the
// parser of a remote host's dump (any platform).

// statFields is what collect keeps of /proc/PID/stat.
type statFields struct {
	pid, ppid, pgrp, tpgid, threads int
	state                           byte
	comm                            string
	ttyNr                           uint64
	start                           uint64
}

// parseStat parses /proc/PID/stat (or a task's): the command sits in
// parentheses and may hold spaces and parentheses itself, so the fields
// start after the last ')'.
func parseStat(b []byte) (statFields, bool) {
	var f statFields
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open || closing+2 > len(b) {
		return f, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return f, false
	}
	f.pid, f.comm = pid, string(b[open+1:closing])
	rest := b[closing+2:]
	// Fields from 3 (state) on; the ones we keep: 3 state, 4 ppid, 5 pgrp,
	// 7 tty_nr, 8 tpgid, 20 num_threads, 22 starttime.
	idx := 3
	for len(rest) > 0 && idx <= 22 {
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end]
		switch idx {
		case 3:
			if len(field) > 0 {
				f.state = field[0]
			}
		case 4:
			f.ppid, _ = strconv.Atoi(string(field))
		case 5:
			f.pgrp, _ = strconv.Atoi(string(field))
		case 7:
			v, _ := strconv.ParseInt(string(field), 10, 64)
			f.ttyNr = uint64(uint32(v))
		case 8:
			f.tpgid, _ = strconv.Atoi(string(field))
		case 20:
			f.threads, _ = strconv.Atoi(string(field))
		case 22:
			f.start, _ = strconv.ParseUint(string(field), 10, 64)
		}
		idx++
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	return f, idx > 8
}

// parseSyscall parses /proc/PID/task/TID/syscall: "running", "-1 sp pc"
// (blocked, not in a system call), or "nr a1 a2 ... sp pc" in hex.
func parseSyscall(b []byte) (int, [3]uint64) {
	var args [3]uint64
	fields := bytes.Fields(b)
	if len(fields) == 0 || fields[0][0] == 'r' {
		return syscallNone, args
	}
	nr, err := strconv.Atoi(string(fields[0]))
	if err != nil || nr < 0 {
		return syscallNone, args
	}
	for i := 0; i < 3 && i+1 < len(fields); i++ {
		v := bytes.TrimPrefix(fields[i+1], []byte("0x"))
		args[i], _ = strconv.ParseUint(string(v), 16, 64)
	}
	return nr, args
}

// execStart finds se.exec_start in a sched file.
func execStart(b []byte) float64 {
	i := bytes.Index(b, []byte("se.exec_start"))
	if i < 0 {
		return 0
	}
	line := b[i:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	k := bytes.LastIndexByte(line, ':')
	if k < 0 {
		return 0
	}
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(line[k+1:])), 64)
	if err != nil {
		return 0
	}
	return v
}

func epollTargetsHold(b []byte, tty *TTYFacts) bool {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.HasPrefix(line, []byte("tfd:")) {
			continue
		}
		ino, ok1 := hexField(line, "ino:")
		sdev, ok2 := hexField(line, "sdev:")
		if !ok1 || !ok2 {
			continue
		}
		maj, min := uint32(sdev>>20), uint32(sdev&0xfffff)
		if ino == tty.Ino && maj == tty.DevMajor && min == tty.DevMinor {
			return true
		}
		if tty.DevTTYIno != 0 && ino == tty.DevTTYIno && maj == tty.DevTTYMajor && min == tty.DevTTYMinor {
			return true
		}
	}
	return false
}

func hexField(line []byte, key string) (uint64, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	v := line[i+len(key):]
	if j := bytes.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	n, err := strconv.ParseUint(string(v), 16, 64)
	return n, err == nil
}

// isTTYMajor: terminals' device majors (tty, console/ptmx, pts, serial).
func isTTYMajor(m uint32) bool {
	return m == 4 || m == 5 || (m >= 136 && m <= 143) || m == 188 || m == 204
}

// linuxMajor and linuxMinor decode a Linux dev_t as user space sees it
// (stat's st_dev and st_rdev, /proc/PID/stat's tty_nr): glibc's encoding,
// of which the kernel's 32-bit one is the low half. Written out rather
// than taken from x/sys/unix so a Linux host's numbers decode the same on
// any platform tmux-mcp runs on.
func linuxMajor(dev uint64) uint32 {
	return uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff)
}

func linuxMinor(dev uint64) uint32 {
	return uint32(dev&0xff) | uint32((dev>>12)&^0xff)
}

// parseSchedstat parses /proc/PID/task/TID/schedstat: "cpu_ns wait_ns
// timeslices".
func parseSchedstat(b []byte) (runs, cpu uint64, ok bool) {
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, 0, false
	}
	cpu, err1 := strconv.ParseUint(string(f[0]), 10, 64)
	runs, err2 := strconv.ParseUint(string(f[2]), 10, 64)
	return runs, cpu, err1 == nil && err2 == nil
}
