package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// countingTmux writes a wrapper that logs every invocation and then runs
// the real tmux, so a test can count the processes a tool really spawns.
func countingTmux(t *testing.T, real string) (bin string, count func() int) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "tmux")
	script := fmt.Sprintf("#!/bin/sh\necho x >> '%s'\nexec '%s' \"$@\"\n", log, real)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
}

// readToolSamples are arguments for one call of every read-only tool,
// targeting by id as an agent is told to, and the number of tmux processes
// that call may spawn. A read-only tool missing here fails the test.
var readToolSamples = map[string]struct {
	args  map[string]any
	procs int
}{
	"get_pane_info":         {map[string]any{"pane_id": "%0"}, 1},
	"capture_pane":          {map[string]any{"pane_id": "%0"}, 1},
	"capture_pane_image":    {map[string]any{"pane_id": "%0"}, 1},
	"snapshot_pane":         {map[string]any{"pane_id": "%0"}, 1},
	"display_message":       {map[string]any{"pane_id": "%0", "format_string": "#{pane_id}"}, 1},
	"search_panes":          {map[string]any{"pattern": "x"}, 2}, // list the candidates, then capture them all in one chain
	"find_pane_by_position": {map[string]any{"corner": "top-left", "window_id": "@0"}, 1},
	"get_server_info":       {map[string]any{}, 1},
	"get_session_info":      {map[string]any{"session_id": "$0"}, 1},
	"get_window_info":       {map[string]any{"window_id": "@0"}, 1},
	"list_servers":          {map[string]any{}, 1}, // one probe per live server; the test's socket dir holds one
	"list_sessions":         {map[string]any{}, 1},
	"list_windows":          {map[string]any{}, 1},
	"capture_since":         {map[string]any{"pane_id": "%0"}, 1},
	// Over exec: locate the pane, attach the session watcher (a control
	// client that then streams events, no polling), one final read for the
	// tail. Over the control-mode engine only the watcher is a process.
	"wait_for_text": {map[string]any{"pane_id": "%0", "timeout": 0.3}, 3},
	// Over exec: locate the pane, attach the watcher; the OS is read
	// without a process, the final read goes over the watcher.
	"wait_for_prompt":  {map[string]any{"pane_id": "%0", "until": "quiet", "quiet": 0.1, "timeout": 0.3}, 2},
	"wait_for_run":     {map[string]any{"run_id": "none"}, 0}, // an unknown id is answered without tmux
	"list_recordings":  {map[string]any{}, 0},                 // the server's own state
	"show_option":      {map[string]any{"option": "status", "scope": "session", "target": "main"}, 1},
	"show_environment": {map[string]any{}, 1},
	"show_hooks":       {map[string]any{"scope": "server"}, 1},
	"show_hook":        {map[string]any{"hook_name": "pane-exited", "global_": true}, 1},
	"list_panes":       {map[string]any{}, 1},
	"call_readonly_tools_batch": {map[string]any{"operations": []any{
		map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0"}}}}, 1},
}

// TestProcessesPerReadTool counts tmux processes per read tool call with
// the exec transport, through a wrapper binary given as the tmux path.
func TestProcessesPerReadTool(t *testing.T) {
	ts := tmuxtest.New(t)
	bin, count := countingTmux(t, ts.Bin)
	// list_servers scans a private socket directory that holds only this
	// test's server, so its probe count does not depend on other tests.
	tmpdir := t.TempDir()
	sockDir := filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Geteuid()))
	if err := os.MkdirAll(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts.SocketPath(), filepath.Join(sockDir, ts.Socket.Name)); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: bin, Safety: config.Mutating, WaitMax: 5, TmuxTmpdir: tmpdir}
	e := newEnvWith(t, ts, cfg, &tmux.ExecRunner{Bin: bin, Env: tmuxtest.CleanEnv()})
	var ref BufferRef
	e.ok("load_buffer", map[string]any{"content": "x"}, &ref)
	var report []string
	for _, tool := range e.srv.Visible() {
		if tool.Tier != config.Readonly {
			continue
		}
		sample, ok := readToolSamples[tool.Name]
		if tool.Name == "show_buffer" {
			sample.args, sample.procs, ok = map[string]any{"buffer_name": ref.BufferName}, 1, true
		}
		if !ok {
			t.Errorf("%s: no sample in readToolSamples", tool.Name)
			continue
		}
		before := count()
		if res := e.call(tool.Name, sample.args); res.IsError && tool.Name != "wait_for_run" {
			t.Errorf("%s: %s", tool.Name, text(res))
			continue
		}
		n := count() - before
		report = append(report, fmt.Sprintf("%s=%d", tool.Name, n))
		if n > sample.procs {
			t.Errorf("%s spawned %d tmux processes, budget %d", tool.Name, n, sample.procs)
		}
	}
	sort.Strings(report)
	t.Logf("tmux processes per call: %s", strings.Join(report, " "))
}

// TestCaptureSpawnsNoProcesses: over the control-mode engine, the readers
// of pane text (capture_pane, snapshot_pane, search_panes, capture_since)
// spawn no tmux process once the engine is connected: captures travel over
// the connection in buffer form (internal/tmux/capture_file.go).
func TestCaptureSpawnsNoProcesses(t *testing.T) {
	e, spawned, connects := countingEngineEnv(t)
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine connects
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"capture_pane", map[string]any{"pane_id": "%0"}},
		{"capture_pane", map[string]any{"pane_id": "%0", "start": -5, "end": 2}},
		{"capture_pane", map[string]any{"pane_id": "%0", "start": -5, "styles": true}},
		{"snapshot_pane", map[string]any{"pane_id": "%0"}},
		{"snapshot_pane", map[string]any{"pane_id": "%0", "styles": true}},
		{"search_panes", map[string]any{"pattern": "x"}},
		{"capture_since", map[string]any{"pane_id": "%0"}},
	} {
		before := spawned.Load()
		e.ok(c.tool, c.args, nil)
		if n := spawned.Load() - before; n != 0 {
			t.Errorf("%s %v spawned %d tmux processes over the control engine", c.tool, c.args, n)
		}
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("%d engine connections, want 1", n)
	}
}

// countingEngineEnv is a read-only tool environment over the control-mode
// engine that counts the tmux processes it spawns and the control clients
// it connects.
func countingEngineEnv(t *testing.T) (e *env, spawned, connects *atomic.Int64) {
	ts := tmuxtest.New(t)
	spawned, connects = new(atomic.Int64), new(atomic.Int64)
	execR := ts.Runner()
	execR.OnSpawn = func([]string) { spawned.Add(1) }
	cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), Exec: execR, OnConnect: func([]string) { connects.Add(1) }}
	t.Cleanup(func() { _ = cr.Close() })
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Readonly, WaitMax: 30}
	return newEnvWith(t, ts, cfg, cr), spawned, connects
}
