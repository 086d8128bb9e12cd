package server

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func init() {
	extraSeedChecks = append(extraSeedChecks,
		seedCheck{"split_window input", "split_window.input.json", toolInput("split_window")},
		seedCheck{"split_window output", "split_window.output.json", toolOutput("split_window")},
		seedCheck{"respawn_pane input", "respawn_pane.input.json", toolInput("respawn_pane")},
		seedCheck{"respawn_pane output", "respawn_pane.output.json", toolOutput("respawn_pane")},
	)
}

// TestPaneWriteAnnotations: the seed pages' annotations, and the contract's
// tiers and presets for the rest.
func TestPaneWriteAnnotations(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	want := map[string]struct {
		tier   config.Tier
		preset Preset
		ts     string
	}{
		"split_window": {config.Mutating, BSE, "window"}, "respawn_pane": {config.Mutating, BSE, "pane"},
		"select_pane": {config.Mutating, MUT, "pane"}, "resize_pane": {config.Mutating, MUT, "pane"},
		"swap_pane": {config.Mutating, CRE, "pane"}, "set_pane_title": {config.Mutating, MUT, "pane"},
		"clear_pane": {config.Mutating, MDS, "pane"}, "enter_copy_mode": {config.Mutating, CRE, "pane"},
		"exit_copy_mode": {config.Mutating, MUT, "pane"}, "pipe_pane": {config.Mutating, SHL, "pane"},
		"send_keys": {config.Mutating, SHL, "pane"}, "send_keys_batch": {config.Mutating, SHL, "pane"},
		"kill_pane": {config.Destructive, DES, "pane"},
	}
	for name, w := range want {
		tool := s.tool(name)
		if tool == nil {
			t.Fatalf("%s not registered", name)
		}
		if tool.Tier != w.tier || tool.Preset != w.preset || tool.Toolset != w.ts {
			t.Errorf("%s: tier %v preset %v toolset %s", name, tool.Tier, tool.Preset, tool.Toolset)
		}
		if len(tool.Description) > 350 {
			t.Errorf("%s: description is %d chars", name, len(tool.Description))
		}
	}
	a := s.tool("split_window").mcpTool().Annotations
	if a.ReadOnlyHint || !*a.DestructiveHint || a.IdempotentHint || !*a.OpenWorldHint {
		t.Errorf("split_window annotations %+v do not match the seed", a)
	}
}

func TestSplitWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-window", "-d", "-t", "main:3")
	e.tmux.MustRun("new-session", "-d", "-s", "other", "-x", "80", "-y", "24")
	dir := t.TempDir()

	var p PaneInfo
	e.ok("split_window", map[string]any{"pane_id": "%0", "direction": "right", "size": "30%", "start_directory": dir,
		"shell":       "sh -c 'echo \"$FOO:$HISTFILE:$HISTCONTROL\" > " + dir + "/env; exec sleep 30'",
		"environment": map[string]any{"FOO": "bar"}, "suppress_persistent_history": true}, &p)
	if p.PaneID == "" || p.PaneID == "%0" || p.WindowID == nil || *p.WindowID != "@0" || *p.PaneWidth != "24" || *p.PaneActive != "0" {
		t.Fatalf("new pane %+v", p)
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "env"))
		return string(b) == "bar::ignorespace\n"
	})
	if got := e.tmux.MustRun("display-message", "-p", "-t", "@0", "#{pane_id}"); got != "%0" {
		t.Errorf("focus moved to %s", got)
	}
	e.ok("split_window", map[string]any{"pane_id": "%0", "direction": "above", "size": 5}, &p)
	if *p.PaneHeight != "5" || *p.PaneTop != 0 {
		t.Errorf("above, size 5: %+v", p)
	}

	// Targets: window_id; session + window_index; session only (lowest
	// window); nothing (first session, alphabetically: main).
	for _, c := range []struct {
		args map[string]any
		win  string
	}{
		{map[string]any{"window_id": "@1"}, "@1"},
		{map[string]any{"session_name": "main", "window_index": "3"}, "@1"},
		{map[string]any{"session_name": "other"}, "@2"},
		{map[string]any{"session_id": "$1", "direction": "left"}, "@2"},
		{map[string]any{}, "@0"},
	} {
		e.ok("split_window", c.args, &p)
		if *p.WindowID != c.win {
			t.Errorf("%v: split window %s, want %s", c.args, *p.WindowID, c.win)
		}
	}

	for _, c := range []struct {
		args map[string]any
		want string
		typ  string
	}{
		{map[string]any{"pane_id": "%99"}, "Pane not found", "PaneNotFound"},
		{map[string]any{"pane_id": "1"}, "malformed", "PaneNotFound"},
		{map[string]any{"window_id": "@99"}, "Window not found", "TmuxObjectDoesNotExist"},
		{map[string]any{"session_name": "nosuch"}, "Session not found", "TmuxObjectDoesNotExist"},
		{map[string]any{"session_name": "main", "window_index": "42"}, "Window not found", "TmuxObjectDoesNotExist"},
		{map[string]any{"session_name": "main", "window_index": "x"}, "window_index", "TmuxObjectDoesNotExist"},
		{map[string]any{"size": "abc"}, "size", "ExpectedToolError"},
		{map[string]any{"size": 0}, "size", "ExpectedToolError"},
		{map[string]any{"size": "150%"}, "size", "ExpectedToolError"},
		{map[string]any{"direction": "up"}, "validation", "ValidationError"},
		{map[string]any{"start_directory": "/nonexistent/dir"}, "not an existing directory", "ExpectedToolError"},
		{map[string]any{"environment": map[string]any{"HISTFILE": "x"}, "suppress_persistent_history": true}, "HISTFILE", "ExpectedToolError"},
	} {
		msg, meta := e.fail("split_window", c.args)
		if !strings.Contains(msg, c.want) || meta["error_type"] != c.typ {
			t.Errorf("%v: %q %v", c.args, msg, meta)
		}
	}
}

func TestPaneWriteDeadServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	for tool, args := range map[string]map[string]any{
		"split_window": {}, "respawn_pane": {"pane_id": "%0"}, "kill_pane": {"pane_id": "%0"},
		"select_pane": {"pane_id": "%0"}, "resize_pane": {"pane_id": "%0", "width": 10}, "swap_pane": {"source_pane_id": "%0", "target_pane_id": "%1"},
		"set_pane_title": {"title": "x"}, "clear_pane": {}, "enter_copy_mode": {}, "exit_copy_mode": {"pane_id": "%0"},
		"pipe_pane": {"pane_id": "%0"}, "send_keys": {"keys": "x"},
	} {
		_, meta := e.fail(tool, args)
		if meta["error_type"] != "TmuxServerNotRunning" {
			t.Errorf("%s: %v", tool, meta)
		}
	}
	var r SendKeysBatchResult
	e.ok("send_keys_batch", map[string]any{"operations": []any{map[string]any{"keys": "x", "pane_id": "%0"}}}, &r)
	if r.Failed != 1 || !strings.Contains(*r.Results[0].Error, "no tmux server") {
		t.Errorf("batch on dead server: %+v", r)
	}
}

func TestRespawnAndKillPane(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.tmux.MustRun("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sleep 300")
	oldPID := e.tmux.MustRun("display-message", "-p", "-t", id, "#{pane_pid}")
	dir := t.TempDir()
	var p PaneInfo
	e.ok("respawn_pane", map[string]any{"pane_id": id, "shell": "sleep 301", "start_directory": dir}, &p)
	if p.PaneID != id || p.PanePID == nil || *p.PanePID == oldPID {
		t.Fatalf("respawn: %+v (old pid %s)", p, oldPID)
	}
	// A start_directory that is a file is refused before the pane's
	// process is killed (on a remote host too: checked there).
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	msg, meta := e.fail("respawn_pane", map[string]any{"pane_id": id, "shell": "sleep 302", "start_directory": f})
	if !strings.Contains(msg, "not an existing directory") || meta["error_type"] != "ExpectedToolError" {
		t.Errorf("a file as start_directory: %q %v", msg, meta)
	}
	if pid := e.tmux.MustRun("display-message", "-p", "-t", id, "#{pane_pid}"); pid != *p.PanePID {
		t.Errorf("the pane was respawned (pid %s, was %s)", pid, *p.PanePID)
	}
	msg, _ = e.fail("respawn_pane", map[string]any{"pane_id": id, "kill": false})
	if !strings.Contains(msg, "still active") {
		t.Errorf("kill=false on a live pane: %q", msg)
	}
	for _, args := range []map[string]any{{"pane_id": "%99"}, {"pane_id": "%99", "kill": false}} {
		if _, meta := e.fail("respawn_pane", args); meta["error_type"] != "PaneNotFound" {
			t.Errorf("%v: %v", args, meta)
		}
	}
	if msg, _ := e.fail("respawn_pane", map[string]any{"session_name": "main"}); !strings.Contains(msg, "pane_id") {
		t.Errorf("resolver fields must be refused: %q", msg)
	}

	var out string
	e.ok("kill_pane", map[string]any{"pane_id": id}, &out)
	if out != "Pane killed: "+id {
		t.Errorf("kill: %q", out)
	}
	if _, meta := e.fail("kill_pane", map[string]any{"pane_id": id}); meta["error_type"] != "PaneNotFound" {
		t.Errorf("second kill: %v", meta)
	}
	if msg, _ := e.fail("kill_pane", map[string]any{"pane_id": "main"}); !strings.Contains(msg, "malformed") {
		t.Errorf("bad id: %q", msg)
	}
}

// TestSelfProtection: kill_pane and respawn_pane refuse the pane this server
// runs in (contract 2.4), and only that pane.
func TestSelfProtection(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	ts := tmuxtest.New(t)
	ts.MustRun("split-window", "-d", "-t", "%0")
	sockPath := ts.SocketPath()
	for _, c := range []struct {
		name   string
		caller config.Caller
		pane   string
		refuse bool
	}{
		{"own pane", config.Caller{SocketPath: sockPath, PaneID: "%0"}, "%0", true},
		{"own pane, socket via symlink", config.Caller{SocketPath: symlinkTo(t, sockPath), PaneID: "%0"}, "%0", true},
		{"TMUX_PANE only", config.Caller{PaneID: "%0"}, "%0", true},
		{"TMUX without TMUX_PANE", config.Caller{SocketPath: sockPath}, "%1", true},
		{"other pane", config.Caller{SocketPath: sockPath, PaneID: "%0"}, "%1", false},
		{"same id on another server", config.Caller{SocketPath: "/tmp/tmux-nonexistent/other", PaneID: "%1"}, "%1", false},
		{"not in tmux", config.Caller{}, "%1", false},
	} {
		e := newEnvOn(t, ts, withCaller(c.caller))
		for _, tool := range []string{"respawn_pane", "kill_pane"} {
			if !c.refuse {
				if tool == "kill_pane" {
					continue // keep the pane for the next case
				}
				e.ok(tool, map[string]any{"pane_id": c.pane}, nil)
				continue
			}
			msg, meta := e.fail(tool, map[string]any{"pane_id": c.pane})
			if !strings.Contains(msg, "Refusing") || meta["expected"] != true {
				t.Errorf("%s %s: %q", c.name, tool, msg)
			}
		}
	}
	if got := ts.MustRun("list-panes", "-t", "@0", "-F", "#{pane_id}"); got != "%0\n%1" {
		t.Fatalf("panes after refusals: %q", got)
	}
	e := newEnvOn(t, ts, withCaller(config.Caller{SocketPath: "/tmp/tmux-nonexistent/other", PaneID: "%1"}))
	e.ok("kill_pane", map[string]any{"pane_id": "%1"}, nil)
}

func symlinkTo(t *testing.T, target string) string {
	l := filepath.Join(t.TempDir(), "sock")
	if err := os.Symlink(target, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSelectPane(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-h", "-d", "-t", "%0") // %1 right of %0
	e.tmux.MustRun("split-window", "-v", "-d", "-t", "%1") // %2 below %1
	var p PaneInfo
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pane_id": "%1"}, "%1"},
		{map[string]any{"direction": "down", "window_id": "@0"}, "%2"},
		{map[string]any{"direction": "left"}, "%0"},
		{map[string]any{"direction": "last", "session_name": "main"}, "%2"},
		{map[string]any{"direction": "next", "window_id": "@0"}, "%0"}, // wraps
		{map[string]any{"direction": "previous"}, "%2"},
		{map[string]any{"pane_id": "%2", "direction": "up"}, "%1"},
		{map[string]any{"pane_id": "%1", "direction": "next"}, "%2"},
		{map[string]any{"pane_id": "%0", "direction": "previous"}, "%2"},
	} {
		e.ok("select_pane", c.args, &p)
		if p.PaneID != c.want || *p.PaneActive != "1" {
			t.Errorf("%v: active %s (%v), want %s", c.args, p.PaneID, *p.PaneActive, c.want)
		}
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "needs pane_id or direction"},
		{map[string]any{"pane_id": "%99"}, "Pane not found"},
		{map[string]any{"direction": "up", "window_id": "@99"}, "Window not found"},
		{map[string]any{"direction": "sideways"}, "validation"},
	} {
		if msg, _ := e.fail("select_pane", c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q", c.args, msg)
		}
	}
}

func TestResizeSwapTitleCopyMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-h", "-d", "-t", "%0")
	var p PaneInfo
	e.ok("resize_pane", map[string]any{"pane_id": "%0", "width": 30}, &p)
	if *p.PaneWidth != "30" {
		t.Errorf("width: %+v", p)
	}
	for _, zoom := range []bool{true, true, false, false, true} {
		e.ok("resize_pane", map[string]any{"pane_id": "%0", "zoom": zoom}, &p)
		if got := e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{window_zoomed_flag}"); got != map[bool]string{true: "1", false: "0"}[zoom] {
			t.Fatalf("zoom=%v: flag %s", zoom, got)
		}
	}
	if msg, _ := e.fail("resize_pane", map[string]any{"zoom": true, "height": 3}); !strings.Contains(msg, "zoom cannot be combined") {
		t.Errorf("zoom+height: %q", msg)
	}
	if _, meta := e.fail("resize_pane", map[string]any{"pane_id": "%9", "width": 3}); meta["error_type"] != "PaneNotFound" {
		t.Errorf("missing pane: %v", meta)
	}
	e.ok("resize_pane", map[string]any{"pane_id": "%0", "zoom": false}, nil)

	e.ok("swap_pane", map[string]any{"source_pane_id": "%0", "target_pane_id": "%1"}, &p)
	if p.PaneID != "%0" || *p.PaneIndex != "1" {
		t.Errorf("swap: %+v", p)
	}
	for _, c := range []struct{ src, dst, want string }{{"%0", "%9", "%9"}, {"%9", "%0", "%9"}, {"%0", "x", "malformed"}} {
		if msg, _ := e.fail("swap_pane", map[string]any{"source_pane_id": c.src, "target_pane_id": c.dst}); !strings.Contains(msg, c.want) {
			t.Errorf("swap %s %s: %q", c.src, c.dst, msg)
		}
	}

	e.ok("set_pane_title", map[string]any{"session_name": "main", "title": "build #1 100%"}, &p)
	if *p.PaneTitle != "build #1 100%" {
		t.Errorf("title: %q", *p.PaneTitle)
	}

	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "seq 1 100; exec cat")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{history_size}")
		return out != "0"
	})
	e.ok("enter_copy_mode", map[string]any{"pane_id": "%0", "scroll_up": 5}, nil)
	if got := e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{pane_in_mode} #{scroll_position}"); got != "1 5" {
		t.Errorf("copy mode: %q", got)
	}
	if msg, _ := e.fail("enter_copy_mode", map[string]any{"scroll_up": -1}); !strings.Contains(msg, "negative") {
		t.Errorf("negative scroll: %q", msg)
	}
	for i := 0; i < 2; i++ { // idempotent
		e.ok("exit_copy_mode", map[string]any{"pane_id": "%0"}, nil)
		if got := e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{pane_in_mode}"); got != "0" {
			t.Errorf("exit copy mode: %q", got)
		}
	}
	var out string
	e.ok("clear_pane", map[string]any{"pane_id": "%0"}, &out)
	if out != "Pane cleared: %0" || e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{history_size}") != "0" {
		t.Errorf("clear: %q", out)
	}
}

func TestSendKeysAndPipe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "typed")
	id := rawCatPane(t, e, file)
	var out string
	e.ok("send_keys", map[string]any{"pane_id": id, "keys": "ls", "suppress_history": true}, &out)
	e.ok("send_keys", map[string]any{"pane_id": id, "keys": "C-c", "enter": false}, &out)
	e.ok("send_keys", map[string]any{"pane_id": id, "keys": "C-c", "enter": false, "literal": true}, &out)
	want := " ls\r\x03C-c"
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { b, _ := os.ReadFile(file); return len(b) >= len(want) })
	if b, _ := os.ReadFile(file); string(b) != want {
		t.Fatalf("typed %q, want %q", b, want)
	}
	if _, meta := e.fail("send_keys", map[string]any{"pane_id": "%99", "keys": "x"}); meta["error_type"] != "PaneNotFound" {
		t.Errorf("missing pane: %v", meta)
	}

	var r SendKeysBatchResult
	e.ok("send_keys_batch", map[string]any{"operations": []any{
		map[string]any{"keys": "a", "pane_id": id, "enter": false},
		map[string]any{"keys": "b", "pane_id": "%99"},
		map[string]any{"keys": "c", "pane_id": id, "literal": true},
	}, "on_error": "continue"}, &r)
	if r.Succeeded != 2 || r.Failed != 1 || r.StoppedAt != nil || r.Results[1].PaneID == nil || !strings.Contains(*r.Results[1].Error, "list_panes") {
		t.Fatalf("continue: %+v", r)
	}
	want += "ac\r"
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { b, _ := os.ReadFile(file); return len(b) >= len(want) })
	e.ok("send_keys_batch", map[string]any{"operations": []any{
		map[string]any{"keys": "x", "session_name": "nosuch"},
		map[string]any{"keys": "y", "pane_id": id},
	}}, &r)
	if r.Failed != 1 || r.StoppedAt == nil || *r.StoppedAt != 0 || len(r.Results) != 1 || r.Results[0].PaneID != nil {
		t.Fatalf("stop: %+v", r)
	}
	e.ok("send_keys_batch", map[string]any{"operations": []any{map[string]any{"keys": "z", "pane_id": id}}, "timeout": 5}, &r)
	if r.Succeeded != 1 {
		t.Fatalf("timeout 5: %+v", r)
	}
	for _, args := range []map[string]any{
		{"operations": []any{}},
		{"operations": []any{map[string]any{"keys": "z"}}, "timeout": 0},
		{"operations": []any{map[string]any{"keys": "z"}}, "timeout": -1},
		{"operations": []any{map[string]any{"keys": "z", "bogus": 1}}},
		{"operations": []any{map[string]any{"pane_id": "%0"}}},
		{"operations": []any{map[string]any{"keys": "z"}}, "on_error": "ignore"},
	} {
		if _, meta := e.fail("send_keys_batch", args); meta["expected"] != true {
			t.Errorf("%v: %v", args, meta)
		}
	}

	// A POSIX sh pane (not the user's shell, whose startup files may be slow).
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	log := filepath.Join(dir, "pane.log")
	e.ok("pipe_pane", map[string]any{"pane_id": "%0", "output_path": log}, &out)
	if out != "Piping pane %0 to "+log {
		t.Errorf("pipe: %q", out)
	}
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo piped-$((6*7))"}, nil)
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "piped-42") })
	e.ok("pipe_pane", map[string]any{"pane_id": "%0"}, &out)
	if out != "Piping stopped for pane %0" {
		t.Errorf("stop: %q", out)
	}
	if got := e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{pane_pipe}"); got != "0" {
		t.Errorf("pipe still on: %s", got)
	}
	// append=false truncates.
	if err := os.WriteFile(log, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("pipe_pane", map[string]any{"pane_id": "%0", "output_path": log, "append": false}, &out)
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { b, _ := os.ReadFile(log); return len(b) == 0 })
	if msg, _ := e.fail("pipe_pane", map[string]any{"pane_id": "%0", "output_path": ""}); !strings.Contains(msg, "blank") {
		t.Errorf("blank: %q", msg)
	}
}

// A huge scroll_up used to be sent as a repeat count: tmux scrolls one line
// per repeat even past the top, so 2^31 left the tmux server unresponsive
// (found by the fault suite). Scrolls clamp at the top of the history, stay
// relative to where an open copy mode already is, and cost the same for any
// distance.
func TestEnterCopyModeScrollClamps(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "seq 1 3000; exec cat")
	// The history is final once seq's last line is on the screen: two equal
	// reads of history_size in a row were not enough on a loaded machine
	// (seq paused between them, and the history grew by 960 lines after).
	var hsize string
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		screen, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
		if !slices.Contains(strings.Fields(screen), "3000") {
			return false
		}
		hsize, _ = e.tmux.Run("display-message", "-p", "-t", "%0", "#{history_size}")
		return hsize != "" && hsize != "0"
	})
	h, _ := strconv.Atoi(hsize)
	for _, c := range []struct {
		name     string
		already  int // scroll position of a copy mode already open, -1 for none
		scrollUp int
		want     int
	}{
		{"small", -1, 7, 7},
		{"just over the step limit", -1, scrollStepMax + 1, scrollStepMax + 1},
		{"relative to an open copy mode", 5, scrollStepMax + 10, scrollStepMax + 15},
		{"past the top", -1, h + 50, h},
		{"2^31-1", -1, 1<<31 - 1, h},
		{"max int", 3, math.MaxInt, h},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.tmux.MustRun("if-shell", "-F", "-t", "%0", "#{pane_in_mode}", "send-keys -X -t %0 cancel")
			if c.already >= 0 {
				e.tmux.MustRun("copy-mode", "-t", "%0")
				e.tmux.MustRun("send-keys", "-X", "-N", strconv.Itoa(c.already), "-t", "%0", "scroll-up")
			}
			start := time.Now()
			e.ok("enter_copy_mode", map[string]any{"pane_id": "%0", "scroll_up": c.scrollUp}, nil)
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v", el)
			}
			if got := e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{pane_in_mode} #{scroll_position}"); got != fmt.Sprintf("1 %d", c.want) {
				t.Errorf("after scroll_up %d: %q, want \"1 %d\"", c.scrollUp, got, c.want)
			}
		})
	}
}
