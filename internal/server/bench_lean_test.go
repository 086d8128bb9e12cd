package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// bigServer starts an isolated server with windows×perWindow panes in one
// session "main", each pane running "seq 1 1500" and then cat (so every
// pane has a history and a current command), and puts "needle-in-haystack"
// on one visible screen. Each window is built by one tmux process.
func bigServer(b *testing.B, windows, perWindow int) *tmuxtest.Server {
	b.Helper()
	ts := tmuxtest.NewWith(b) // no server yet
	const prog = "sh -c 'seq 1 1500; exec cat'"
	for w := 0; w < windows; w++ {
		var args []string
		if w == 0 {
			args = []string{"new-session", "-d", "-s", "main", "-x", "200", "-y", "60", prog, ";",
				"set-option", "-g", "history-limit", "3000"}
		} else {
			args = []string{"new-window", "-d", "-t", "main", prog}
		}
		for p := 1; p < perWindow; p++ {
			args = append(args, ";", "split-window", "-d", "-t", fmt.Sprintf("main:%d", w), prog,
				";", "select-layout", "-t", fmt.Sprintf("main:%d", w), "tiled")
		}
		ts.MustRun(args...)
	}
	ts.MustRun("send-keys", "-t", fmt.Sprintf("main:%d.3", windows/2), "-l", "needle-in-haystack")
	return ts
}

// timedCalls runs one tool call per iteration and reports the median call
// in milliseconds (p50-ms), checking every answer with ok.
func timedCalls(b *testing.B, e *env, args *mcp.CallToolParams, ok func(*mcp.CallToolResult) bool) {
	b.Helper()
	var durs []time.Duration
	defer cpuPerOp(b, e.tmux)()
	for b.Loop() {
		start := time.Now()
		res, err := e.cs.CallTool(context.Background(), args)
		durs = append(durs, time.Since(start))
		if err != nil || res.IsError || !ok(res) {
			b.Fatal(err, text(res))
		}
	}
	b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
}

// timedExec runs one tmux process per iteration and reports its median in
// milliseconds: the floor of a one-process-per-call server for the same
// query.
func timedExec(b *testing.B, ts *tmuxtest.Server, args ...string) {
	b.Helper()
	var durs []time.Duration
	defer cpuPerOp(b, ts)()
	for b.Loop() {
		cmd := exec.Command(ts.Bin, append([]string{"-L", ts.Socket.Name}, args...)...)
		cmd.Env = tmuxtest.CleanEnv()
		start := time.Now()
		out, err := cmd.Output()
		durs = append(durs, time.Since(start))
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
}

// BenchmarkListPanes500 is list_panes over a 500-pane server (50 windows of
// 10 panes) through the whole server and the control engine, beside the
// floor of an exec'd server: one `tmux list-panes -a -F` process asking
// for the full 24-field pane format.
func BenchmarkListPanes500(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 500-pane server")
	}
	ts := bigServer(b, 50, 10)
	b.Run("exec-list-panes-a-24-fields", func(b *testing.B) {
		timedExec(b, ts, "list-panes", "-a", "-F", strings.Join(wrapFields(fullPaneFields), " "))
	})
	b.Run("control-list-panes-a-24-fields", func(b *testing.B) {
		timedQuery(b, ts, fullPaneFields, 500)
	})
	b.Run("control-list-panes-a-paneFields", func(b *testing.B) {
		timedQuery(b, ts, paneFields, 500)
	})
	b.Run("server-list_panes-control", func(b *testing.B) {
		e := benchEnv(b, ts, "control")
		args := &mcp.CallToolParams{Name: "list_panes", Arguments: map[string]any{}}
		timedCalls(b, e, args, func(r *mcp.CallToolResult) bool { return strings.Count(text(r), `"pane_id"`) == 500 })
	})
}

// BenchmarkSearchPanes500 searches the visible screens of 500 panes, each
// with 1500 lines of history, for a string on one of them, through the
// whole server and the control engine, beside the floor of an exec'd
// server: one `tmux list-panes -a -F` process asking for the fields of a
// match (the captures then still need doing).
func BenchmarkSearchPanes500(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 500-pane server")
	}
	ts := bigServer(b, 50, 10)
	b.Run("exec-list-panes-a-17-fields", func(b *testing.B) {
		timedExec(b, ts, "list-panes", "-a", "-F", strings.Join(wrapFields(fullSearchFields), " "))
	})
	b.Run("control-list-panes-a-17-fields", func(b *testing.B) {
		timedQuery(b, ts, fullSearchFields, 500)
	})
	b.Run("control-list-panes-a-pane_id", func(b *testing.B) {
		timedQuery(b, ts, []string{"pane_id"}, 500)
	})
	b.Run("server-search_panes-control", func(b *testing.B) {
		e := benchEnv(b, ts, "control")
		args := &mcp.CallToolParams{Name: "search_panes", Arguments: map[string]any{"pattern": "needle-in-haystack"}}
		timedCalls(b, e, args, func(r *mcp.CallToolResult) bool { return strings.Contains(text(r), "needle") })
	})
}

// fullPaneFields and fullSearchFields are what list_panes and search_panes
// asked tmux for every pane before they asked only for what a result
// holds: the in-run baseline of the tmux side of those calls.
var (
	fullPaneFields = []string{
		"pane_id", "pane_index", "pane_width", "pane_height",
		"pane_left", "pane_top", "pane_right", "pane_bottom",
		"pane_at_left", "pane_at_right", "pane_at_top", "pane_at_bottom",
		"pane_tty", "pane_pid", "pane_title", "pane_active",
		"window_id", "window_index", "window_name", "session_id", "session_name",
		"socket_path", "pane_current_command", "pane_current_path",
	}
	fullSearchFields = []string{
		"pane_id", "pane_left", "pane_top", "pane_right", "pane_bottom",
		"pane_at_left", "pane_at_right", "pane_at_top", "pane_at_bottom",
		"pane_tty", "window_id", "window_name", "session_id", "session_name",
		"socket_path", "pane_current_command", "pane_current_path",
	}
)

// timedQuery is one `list-panes -a` with the given fields over a control
// connection, parsed into rows, per iteration: the tmux side of a listing
// without the MCP layers. It reports the median in milliseconds.
func timedQuery(b *testing.B, ts *tmuxtest.Server, fields []string, want int) {
	b.Helper()
	cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
	defer cr.Close()
	c := &tmux.Client{Runner: cr}
	var durs []time.Duration
	defer cpuPerOp(b, ts)()
	for b.Loop() {
		start := time.Now()
		rows, err := c.Rows(context.Background(), ts.Socket, tmux.Command{"list-panes", "-a"}, fields)
		durs = append(durs, time.Since(start))
		if err != nil || len(rows) != want {
			b.Fatal(err, len(rows))
		}
	}
	b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
}

// cpuPerOp starts counting the CPU time of the tmux server and of this
// process; the function it returns reports both per iteration in
// milliseconds (tmux-cpu-ms, go-cpu-ms). On a machine shared with other
// work the wall-clock medians grow with the load, the CPU per call much
// less, so the two together tell our side from tmux's. A tmuxtest.Server
// that was never started reports no tmux CPU.
func cpuPerOp(b *testing.B, ts *tmuxtest.Server) func() {
	pid, _ := ts.Run("display-message", "-p", "#{pid}")
	pid = strings.TrimSpace(pid)
	tmux0, self0 := processCPU(pid), processCPU("self")
	return func() {
		n := float64(b.N)
		if pid != "" {
			b.ReportMetric(float64((processCPU(pid)-tmux0).Microseconds())/1000/n, "tmux-cpu-ms")
		}
		b.ReportMetric(float64((processCPU("self")-self0).Microseconds())/1000/n, "go-cpu-ms")
	}
}

func wrapFields(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = "#{" + f + "}"
	}
	return out
}

// BenchmarkGetPaneInfoThroughput is get_pane_info calls per second through
// one in-process Go SDK client session over the control engine, with 8
// calls in flight (8 goroutines sharing the session), beside two baselines
// in the same run: one call in flight, and the SDK's own floor (a no-op
// tool answering the same bytes, see BenchmarkJSONCost) at 1 and 8 in
// flight. It runs at the GC settings the shipped binary applies
// (cli.ApplyGCSettings). Besides calls/s it reports the CPU time per call
// of this process (go-cpu-us, client and server together) and of the tmux
// server (tmux-cpu-us): on a machine shared with other work, wall-clock
// throughput drops with the load while CPU per call does not.
func BenchmarkGetPaneInfoThroughput(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(14 << 20))
	ts := tmuxtest.New(b)
	cs, info, noop := benchFloor(b, ts)
	tmuxPID := ts.MustRun("display-message", "-p", "#{pid}")
	for _, c := range []struct {
		name string
		args *mcp.CallToolParams
	}{{"floor-noop", noop}, {"get_pane_info", info}} {
		for _, inflight := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/inflight-%d", c.name, inflight), func(b *testing.B) {
				call := func() {
					res, err := cs.CallTool(context.Background(), c.args)
					if err != nil || res.IsError {
						b.Error(err, res)
					}
				}
				call()
				runtime.GC()
				goCPU, tmuxCPU := processCPU("self"), processCPU(tmuxPID)
				start := time.Now()
				b.ResetTimer()
				var next atomic.Int64
				var wg sync.WaitGroup
				for w := 0; w < inflight; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							call()
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				elapsed := time.Since(start)
				n := float64(b.N)
				b.ReportMetric(n/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64((processCPU("self")-goCPU).Microseconds())/n, "go-cpu-us")
				b.ReportMetric(float64((processCPU(tmuxPID)-tmuxCPU).Microseconds())/n, "tmux-cpu-us")
			})
		}
	}
}

// processCPU is the user and system CPU time a process has used so far
// (pid "self" for this one), from /proc (10 ms ticks).
func processCPU(pid string) time.Duration {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}
