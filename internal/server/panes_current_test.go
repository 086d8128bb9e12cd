package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// currentPanes builds, beside the session "main", windows whose panes run
// what a pane's current command and path can be: a shell at its prompt,
// sleep, python3, vim, less, a shell that keeps changing directory, a
// foreground that keeps changing (two process groups given the terminal in
// turn), a stopped foreground, an ended pane kept by
// remain-on-exit, argv[0]s with spaces, quotes, a leading '-', "exec ",
// non-ASCII and nothing at all, a directory deleted under a program, and a
// directory whose name holds spaces and non-ASCII. Each kind is repeated
// until there are at least want panes.
func currentPanes(t *testing.T, ts *tmuxtest.Server, want int) {
	t.Helper()
	fgcorpus.Require(t, "bash", "python3")
	dir := t.TempDir()
	spaced := filepath.Join(dir, "with space", "ünï dïr")
	if err := os.MkdirAll(spaced, 0o700); err != nil {
		t.Fatal(err)
	}
	ts.MustRun("set-option", "-g", "remain-on-exit", "on")
	argv0 := func(name string) []string {
		return []string{"bash", "-c", `exec -a "$0" sleep 1000`, name}
	}
	type kind struct {
		dir  string
		argv []string
	}
	kinds := []kind{
		{"", nil}, // the default shell, at its prompt
		{spaced, nil},
		{"", []string{"sleep", "1000"}},
		{"", []string{"python3", "-c", "import time; time.sleep(1000)"}},
		{"", []string{"less", "/etc/hosts"}},
		{"", []string{"bash", "-c", "while :; do cd /; sleep 0.5; cd /tmp; sleep 0.5; done"}},
		{"", []string{"python3", "-c", alternate}},
		{"", []string{"bash", "-c", "exit 3"}},
		{"", argv0("my prog ünï")},
		{"", argv0("/opt/weird dir/tööl")},
		{"", argv0("café")},
		{"", argv0("-loginish")},
		{"", argv0(`"quoted name" x`)},
		{"", argv0("exec sleeper")},
		{"", argv0("")},
		{"", argv0("trail   ")},
		{spaced, []string{"sleep", "1000"}},
	}
	// vim is optional here, but CI installs it: there it must be covered.
	if _, err := exec.LookPath("vim"); err == nil || os.Getenv("CI") != "" {
		fgcorpus.Require(t, "vim")
		kinds = append(kinds, kind{"", []string{"vim", "-u", "NONE", "-n", "-i", "NONE"}})
	}
	n := 1 // main's pane
	var gone []string
	for n < want {
		for _, k := range kinds {
			args := []string{"new-window", "-d", "-t", "main"}
			if k.dir != "" {
				args = append(args, "-c", k.dir)
			}
			ts.MustRun(append(args, k.argv...)...)
			n++
		}
		// A program whose directory was deleted under it.
		g := filepath.Join(dir, "gone"+strconv.Itoa(n))
		if err := os.Mkdir(g, 0o700); err != nil {
			t.Fatal(err)
		}
		ts.MustRun("new-window", "-d", "-t", "main", "-c", g, "sleep", "1000")
		gone = append(gone, g)
		n++
		// A stopped foreground.
		pid := ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_pid}", "-t", "main", "sleep", "1000")
		if err := exec.Command("kill", "-STOP", strings.TrimSpace(pid)).Run(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	for _, g := range gone {
		if err := os.Remove(g); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // shells start, "exit 3" ends
}

// alternate gives the terminal to one of two process groups and then the
// other, every half second: a foreground that changes while calls run,
// with no state between the two (one tcsetpgrp each time).
const alternate = `
import os, signal, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
kids = []
for name, d in (("alpha", "/"), ("beta", "/tmp")):
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.chdir(d)
        os.execvp("sleep", [name, "1000"])
    os.setpgid(pid, pid)
    kids.append(pid)
i = 0
while True:
    os.tcsetpgrp(0, kids[i % 2])
    i += 1
    time.sleep(0.5)
`

// tmuxCurrent is tmux's own answer for every pane's current command and
// path, by pane id.
func tmuxCurrent(t *testing.T, ts *tmuxtest.Server) map[string][2]string {
	t.Helper()
	out := ts.MustRun("list-panes", "-a", "-F", "#{pane_id}\x1f#{pane_current_command}\x1f#{pane_current_path}\x1e")
	m := map[string][2]string{}
	for _, rec := range strings.Split(out, "\x1e") {
		f := strings.Split(strings.TrimPrefix(rec, "\n"), "\x1f")
		if len(f) == 3 {
			m[f[0]] = [2]string{f[1], f[2]}
		}
	}
	return m
}

// checkCurrent calls list_panes between two of tmux's own answers and
// checks every pane's current command and path against them: equal to the
// answer before or to the answer after.
func checkCurrent(t *testing.T, e *env, panes int) {
	t.Helper()
	before := tmuxCurrent(t, e.tmux)
	var got []PaneInfo
	e.list("list_panes", map[string]any{}, &got)
	after := tmuxCurrent(t, e.tmux)
	if len(got) != panes {
		t.Fatalf("list_panes: %d panes, want %d", len(got), panes)
	}
	for _, p := range got {
		have := [2]string{str(p.PaneCurrentCommand), str(p.PaneCurrentPath)}
		if have != before[p.PaneID] && have != after[p.PaneID] {
			t.Errorf("pane %s: list_panes says %q, tmux said %q before and %q after", p.PaneID, have, before[p.PaneID], after[p.PaneID])
		}
	}
}

// TestListPanesCurrentMatchesTmux is the differential test of the current
// command and path list_panes reads from the OS (panes_current.go): over
// many kinds of pane, each answer is tmux's own, taken just before or just
// after the call, and most panes were read from the OS (the ended pane and
// the empty argv[0] are asked of tmux).
func TestListPanesCurrentMatchesTmux(t *testing.T) {
	skipOverSSH(t, "the OS read is for local servers")
	ts := tmuxtest.New(t)
	currentPanes(t, ts, 60)
	e := newEnvOn(t, ts)
	panes := len(tmuxCurrent(t, ts))
	for range 8 {
		read, asked := e.srv.currentRead.Load(), e.srv.currentAsked.Load()
		checkCurrent(t, e, panes)
		read, asked = e.srv.currentRead.Load()-read, e.srv.currentAsked.Load()-asked
		if read < int64(panes)*3/4 || asked < 1 {
			t.Errorf("%d panes read from the OS and %d asked of tmux, of %d: want most read and the ended ones asked", read, asked, panes)
		}
		time.Sleep(70 * time.Millisecond)
	}
}

// TestListPanesCurrentFallback: where the OS cannot be read (here, a proc
// file system with nothing in it), every pane's current command and path
// are asked of tmux, with the same answers.
func TestListPanesCurrentFallback(t *testing.T) {
	skipOverSSH(t, "the OS read is for local servers")
	ts := tmuxtest.New(t)
	currentPanes(t, ts, 20)
	e := newEnvOn(t, ts)
	e.srv.fgOptions.ProcRoot = t.TempDir()
	panes := len(tmuxCurrent(t, ts))
	for range 3 {
		read, asked := e.srv.currentRead.Load(), e.srv.currentAsked.Load()
		checkCurrent(t, e, panes)
		if r, a := e.srv.currentRead.Load()-read, e.srv.currentAsked.Load()-asked; r != 0 || a != int64(panes) {
			t.Errorf("%d panes read from the OS and %d asked of tmux, want 0 and %d", r, a, panes)
		}
	}
	// And one pane by id (the fallback's -f filter), in a window scope.
	var one []PaneInfo
	e.list("list_panes", map[string]any{"window_id": "@0"}, &one)
	want := tmuxCurrent(t, ts)
	if len(one) != 1 || [2]string{str(one[0].PaneCurrentCommand), str(one[0].PaneCurrentPath)} != want[one[0].PaneID] {
		t.Errorf("window @0: %+v, tmux says %q", one, want)
	}
}

// TestListPanesWindowEdges: the edges, index and active flag list_panes
// computes from each window's size, pane-border-status, pane-base-index
// and active pane (windowEdges, paneIndexes) are tmux's own, for every
// scope, with the border status off, at the top and at the bottom, a base
// index of 3, and a window linked into two sessions at three places.
func TestListPanesWindowEdges(t *testing.T) {
	skipOverSSH(t, "the fast listing is for local servers")
	ts := tmuxtest.NewWith(t, "main", "other")
	ts.MustRun("split-window", "-h", "-t", "main:0")
	ts.MustRun("split-window", "-v", "-t", "main:0.1")
	ts.MustRun("new-window", "-d", "-t", "main:1")
	ts.MustRun("split-window", "-v", "-t", "main:1")
	ts.MustRun("split-window", "-h", "-t", "main:1.0")
	ts.MustRun("set-option", "-w", "-t", "main:0", "pane-border-status", "top")
	ts.MustRun("set-option", "-w", "-t", "main:1", "pane-border-status", "bottom")
	ts.MustRun("split-window", "-h", "-t", "other:0")
	ts.MustRun("resize-window", "-t", "other:0", "-x", "101", "-y", "33")
	ts.MustRun("set-option", "-w", "-t", "other:0", "pane-base-index", "3")
	ts.MustRun("select-pane", "-t", "main:1.2")
	// main's window 1 linked into other, twice: listed three times.
	ts.MustRun("link-window", "-d", "-s", "main:1", "-t", "other:5")
	ts.MustRun("link-window", "-d", "-s", "main:1", "-t", "other:6")
	e := newEnvOn(t, ts)
	const f = "#{pane_at_left} #{pane_at_right} #{pane_at_top} #{pane_at_bottom} #{pane_right} #{pane_bottom} #{pane_index} #{pane_active}"
	want := map[string]string{}
	for _, line := range strings.Split(ts.MustRun("list-panes", "-a", "-F", "#{pane_id} "+f), "\n") {
		id, rest, _ := strings.Cut(line, " ")
		want[id] = rest
	}
	b := func(p *bool) int {
		if *p {
			return 1
		}
		return 0
	}
	mainID := strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "main", "#{session_id}"))
	for _, scope := range []map[string]any{
		{}, {"session_name": "main"}, {"session_id": mainID}, {"window_id": "@1"},
		{"session_name": "main", "window_index": "1"}, {"session_name": "other"},
	} {
		var panes []PaneInfo
		e.list("list_panes", scope, &panes)
		if len(panes) == 0 {
			t.Errorf("%v: no panes", scope)
		}
		for _, p := range panes {
			got := fmt.Sprintf("%d %d %d %d %d %d %s %s", b(p.PaneAtLeft), b(p.PaneAtRight), b(p.PaneAtTop), b(p.PaneAtBottom), *p.PaneRight, *p.PaneBottom, *p.PaneIndex, *p.PaneActive)
			if got != want[p.PaneID] {
				t.Errorf("%v: pane %s: at left/right/top/bottom, right, bottom, index, active = %s, tmux says %s", scope, p.PaneID, got, want[p.PaneID])
			}
		}
	}
}
