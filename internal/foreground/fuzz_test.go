package foreground

import (
	"strings"
	"testing"
)

// sampleDump is a dump as RemoteScript writes it for a bash at its prompt.
const sampleDump = `pane 4242 /dev/pts/7
arch x86_64
uptime 1234.56
schednow se.exec_start                                :       1234000.000000
tty 88 7 10 25
devtty 9 6
mode 4500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0
stat 4242 (bash) S 4241 4242 4242 34823 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1000 1000 1000 0
/proc/4242/task/4242/stat:4242 (bash) S 4241 4242 4242 34823 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1000 1000 1000 0
/proc/4242/task/4242/wchan:poll_schedule_timeout.constprop.0
/proc/4242/task/4242/syscall:270 0x1 0x7ffe 0x0 0x0 0x7ffd 0x8 0x7ffc 0x7f00
/proc/4242/task/4242/schedstat:1000 2000 3
/proc/4242/task/4242/sched:se.exec_start                                :       1233000.000000
fd 4242 total 0
fd 4242 lrwx------ 1 u u 64 Dec  3 14:05 0 -> /dev/pts/7
fd 4242 lrwx------ 1 u u 64 Dec  3 14:05 255 -> /dev/pts/7
cmdline 4242 -bash
`

// TestParseDump: a dump decides like the local reader would.
func TestParseDump(t *testing.T) {
	r := ParseRemote([]byte(sampleDump), 0)
	if r.State != WaitingForInput || r.Basis != Inferred || r.Command != "bash" || r.PID != 4242 || !r.ShellAtPrompt || r.StateSeconds != 1 {
		t.Fatalf("%+v", r)
	}
	// The pid on another terminal: unknown, never a guess.
	other := strings.Replace(sampleDump, "34823", "34824", 1)
	if r := ParseRemote([]byte(other), 0); r.State != Unknown {
		t.Fatalf("a pid on another terminal: %+v", r)
	}
	if r := ParseRemote([]byte("pane 1 /dev/pts/1\ngone\n"), 1); r.State != Exited {
		t.Fatalf("gone: %+v", r)
	}
	if r := ParseRemote(nil, 7); r.State != Unknown || r.PID != 7 {
		t.Fatalf("empty: %+v", r)
	}
}

// FuzzParseDump: whatever a host prints (it can hold any process name or
// file name), parsing never panics and the answer is one of the states.
func FuzzParseDump(f *testing.F) {
	f.Add([]byte(sampleDump))
	f.Add([]byte("pane 1 /dev/pts/1\ntty 88 1 4 25\nstat 1 (a) b) S 0 1 1 34817 1\n"))
	f.Add([]byte("/proc/1/task/1/syscall:running\n/proc/x/task/y/z:\n/proc/1/fdinfo/3:tfd: 0 ino:zz sdev:\n"))
	valid := map[State]bool{WaitingForInput: true, Running: true, Sleeping: true, Stopped: true, Exited: true, Unknown: true}
	f.Fuzz(func(t *testing.T, dump []byte) {
		r := ParseRemote(dump, 3)
		if !valid[r.State] || (r.Basis != Exact && r.Basis != Inferred) {
			t.Fatalf("%+v", r)
		}
	})
}

// FuzzParseStat: a command name may hold spaces and parentheses; fields
// are read after the last ')'.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("12 (a (b) c) S 1 12 12 34816 12 0 0 0"), "x")
	f.Add([]byte("1 () R"), "")
	f.Fuzz(func(t *testing.T, b []byte, comm string) {
		parseStat(b)
		parseSyscall(b)
		parseSchedstat(b)
		execStart(b)
		epollTargetsHold(b, &TTYFacts{})
		if strings.ContainsAny(comm, "\n") {
			return
		}
		line := "77 (" + comm + ") T 1 77 77 34817 77 0 0 0 0 0 0 0 0 0 0 0 1 0 5"
		st, ok := parseStat([]byte(line))
		if !ok || st.pid != 77 || st.comm != comm || st.state != 'T' || st.pgrp != 77 || st.ttyNr != 34817 || st.threads != 1 {
			t.Fatalf("%q: %+v %v", line, st, ok)
		}
	})
}
