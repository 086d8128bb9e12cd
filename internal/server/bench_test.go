package server

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// benchEnv is an env over the given engine ("control" or "exec").
func benchEnv(b testing.TB, ts *tmuxtest.Server, engine string) *env {
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: 30, SuppressHistory: true}
	var r tmux.Runner = ts.Runner()
	if engine == "control" {
		cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
		b.Cleanup(func() { _ = cr.Close() })
		r = cr
	}
	return newEnvWith(b, ts, cfg, r)
}

// BenchmarkGetPaneInfo compares one get_pane_info call through the whole
// server (MCP client, validation, tmux round trip, result) with the floor
// of the exec transport: one bare `tmux display-message` process.
func BenchmarkGetPaneInfo(b *testing.B) {
	ts := tmuxtest.New(b)
	b.Run("bare-exec-display-message", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(ts.Bin, "-L", ts.Socket.Name, "display-message", "-p", "-t", "%0", "#{pane_id}")
			cmd.Env = tmuxtest.CleanEnv()
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	for _, engine := range []string{"exec", "control"} {
		b.Run("server-get_pane_info-"+engine, func(b *testing.B) {
			e := benchEnv(b, ts, engine)
			args := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%0"}}
			for b.Loop() {
				res, err := e.cs.CallTool(context.Background(), args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkRunCommandTrue is the round trip of run_command "true": type the
// wrapper, see the end marker in the pane's output stream, answer.
func BenchmarkRunCommandTrue(b *testing.B) {
	ts := tmuxtest.New(b)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	e := benchEnv(b, ts, "control")
	args := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"pane_id": "%0", "command": "true", "timeout": 10}}
	e.ok("run_command", args.Arguments, nil) // attach the watcher
	for b.Loop() {
		res, err := e.cs.CallTool(context.Background(), args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkSearchPanes200 searches 200 panes, each with 1500 lines of
// history, for a string on one visible screen.
func BenchmarkSearchPanes200(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200-pane server")
	}
	ts := tmuxtest.New(b)
	ts.MustRun("set-option", "-g", "history-limit", "3000")
	ts.MustRun("kill-server")
	for w := 0; w < 20; w++ {
		if w == 0 {
			ts.MustRun("new-session", "-d", "-s", "main", "-x", "200", "-y", "60", "sh -c 'seq 1 1500; exec cat'")
			ts.MustRun("set-option", "-g", "history-limit", "3000")
		} else {
			ts.MustRun("new-window", "-d", "-t", "main", "sh -c 'seq 1 1500; exec cat'")
		}
		for p := 1; p < 10; p++ {
			ts.MustRun("split-window", "-d", "-t", fmt.Sprintf("main:%d", w), "sh -c 'seq 1 1500; exec cat'")
			ts.MustRun("select-layout", "-t", fmt.Sprintf("main:%d", w), "tiled")
		}
	}
	ts.MustRun("send-keys", "-t", "main:7.3", "-l", "needle-in-haystack")
	for _, engine := range []string{"exec", "control"} {
		b.Run(engine, func(b *testing.B) {
			e := benchEnv(b, ts, engine)
			args := &mcp.CallToolParams{Name: "search_panes", Arguments: map[string]any{"pattern": "needle-in-haystack"}}
			var durs []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := e.cs.CallTool(context.Background(), args)
				durs = append(durs, time.Since(start))
				if err != nil || res.IsError || !strings.Contains(text(res), "needle") {
					b.Fatal(err, text(res))
				}
			}
			b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkWaitDetection measures how long after a marker line is written
// wait_for_text returns, against a 50 ms capture-pane poller (the
// reference's design) measured in the same run.
func BenchmarkWaitDetection(b *testing.B) {
	ts := tmuxtest.New(b)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "cat")
	e := benchEnv(b, ts, "control")
	type probe func(marker string, written chan time.Time) time.Duration
	write := func(marker string, written chan time.Time) {
		time.Sleep(30 * time.Millisecond)
		written <- time.Now()
		ts.MustRun("send-keys", "-t", "%0", "-l", marker+"\n")
	}
	engine := func(marker string, written chan time.Time) time.Duration {
		go write(marker, written)
		res := e.call("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{marker}, "timeout": 5})
		done := time.Now()
		if res.IsError || !strings.Contains(text(res), `"matched"`) {
			b.Fatal(text(res))
		}
		return done.Sub(<-written)
	}
	poller := func(marker string, written chan time.Time) time.Duration {
		go write(marker, written)
		for {
			cmd := exec.Command(ts.Bin, "-L", ts.Socket.Name, "capture-pane", "-p", "-t", "%0")
			cmd.Env = tmuxtest.CleanEnv()
			out, _ := cmd.Output()
			if strings.Contains(string(out), marker) {
				return time.Since(<-written)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var seq atomic.Int64
	for name, p := range map[string]probe{"engine": engine, "poll-50ms": poller} {
		b.Run(name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				marker := fmt.Sprintf("MARK-%d-X", seq.Add(1))
				lat = append(lat, p(marker, make(chan time.Time, 1)))
			}
			b.ReportMetric(float64(median(lat).Microseconds())/1000, "p50-ms")
		})
	}
}

// TestWaitSpawnsNoProcesses counts tmux processes started while a 3 s
// wait_for_text finds nothing, over the engine: only the control clients
// (the engine's connection and the session watcher) may start.
func TestWaitSpawnsNoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("3 s wait")
	}
	e, spawned, connects := countingEngineEnv(t)
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine connects (one list-sessions to find a session)
	before := spawned.Load()
	var r WaitForTextResult
	e.ok("wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"never"}, "timeout": 3}, &r)
	n := spawned.Load() - before
	t.Logf("3 s wait_for_text that found nothing: %d tmux processes spawned through the runner, %d engine connections, %d watchers attached", n, connects.Load(), e.srv.watch.Count())
	if n != 0 || r.Outcome != "timeout" {
		t.Errorf("%d processes spawned during the wait (%s)", n, r.Outcome)
	}
}

// BenchmarkCapturePane is one capture_pane call through the whole server,
// over the control-mode engine (the capture travels in buffer form over the
// connection, no process) and over exec (one tmux process per call, what
// the control engine also did for captures before).
func BenchmarkCapturePane(b *testing.B) {
	ts := tmuxtest.New(b)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "seq 1 40; exec sleep 600")
	for _, engine := range []string{"control", "exec"} {
		b.Run(engine, func(b *testing.B) {
			e := benchEnv(b, ts, engine)
			args := &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"pane_id": "%0"}}
			for b.Loop() {
				res, err := e.cs.CallTool(context.Background(), args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
