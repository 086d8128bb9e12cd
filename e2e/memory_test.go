package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestMemoryAfterCalls drives the built binary over stdio with the Go SDK
// client for 2,000 get_pane_info calls, reads the server process's VmRSS,
// then makes it 20,000 calls and reads it again: the resident set must stay
// within 20 MB and must not grow with the number of calls (a leak, or a
// collector that lets the heap drift, would show here). It takes tens of
// seconds, so it runs only with TMUX_MCP_MEMORY_TEST=1.
// TMUX_MCP_MEMORY_ENV adds space-separated VAR=value settings to the
// server's environment, e.g. "GOGC=100 GOMEMLIMIT=off" to measure the Go
// runtime's defaults instead of the shipped GC settings.
func TestMemoryAfterCalls(t *testing.T) {
	if os.Getenv("TMUX_MCP_MEMORY_TEST") == "" {
		t.Skip("set TMUX_MCP_MEMORY_TEST=1 to run (about 20,000 calls)")
	}
	ts := tmuxtest.New(t)
	cmd := serverCmd(ts, append([]string{"TMUX_MCP_AUDIT_LOG=/dev/null"}, strings.Fields(os.Getenv("TMUX_MCP_MEMORY_ENV"))...)...)
	cs := connect(t, cmd)
	pid := cmd.Process.Pid
	ctx := context.Background()
	args := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%0"}}
	calls := 0
	// callUntil makes calls up to n in all and returns the highest VmRSS
	// sampled every 50 calls over the last 1,000: a single reading lands at
	// a random point of the collector's cycle, the peak of a window does not.
	callUntil := func(n int) (peak int64) {
		for ; calls < n; calls++ {
			res, err := cs.CallTool(ctx, args)
			if err != nil || res.IsError {
				t.Fatalf("call %d: %v %+v", calls, err, res)
			}
			if calls >= n-1000 && calls%50 == 0 {
				peak = max(peak, procStatus(t, pid).rss)
			}
		}
		return max(peak, procStatus(t, pid).rss)
	}
	const limit = 20 << 20
	peak2k := callUntil(2000)
	st2k := procStatus(t, pid)
	t.Logf("after %d calls: VmRSS %.2f MB (peak of the last 1,000 calls %.2f MB), RssAnon %.2f MB, VmHWM %.2f MB",
		calls, mb(st2k.rss), mb(peak2k), mb(st2k.anon), mb(st2k.hwm))
	peak20k := callUntil(20000)
	st20k := procStatus(t, pid)
	t.Logf("after %d calls: VmRSS %.2f MB (peak of the last 1,000 calls %.2f MB), RssAnon %.2f MB, VmHWM %.2f MB",
		calls, mb(st20k.rss), mb(peak20k), mb(st20k.anon), mb(st20k.hwm))
	if peak2k > limit {
		t.Errorf("VmRSS after 2,000 calls peaks at %.2f MB, want ≤ 20 MB", mb(peak2k))
	}
	// 256 KB (64 pages, 1.4% of the total) of slack: the peak of a window
	// varies by 0.1-0.3 MB from run to run with where the collector's cycles
	// fall, and the runtime may fault in a few pages of code or stack late;
	// a leak or a drifting heap goal shows as megabytes (without the memory
	// limit the resident set is 29 MB by 2,000 calls).
	if peak20k > peak2k+256<<10 {
		t.Errorf("VmRSS grew: peak %.2f MB over calls 1,000-2,000, %.2f MB over calls 19,000-20,000", mb(peak2k), mb(peak20k))
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

type status struct{ rss, anon, hwm int64 }

// procStatus reads VmRSS, RssAnon and VmHWM (peak RSS), in bytes, from
// /proc/PID/status.
func procStatus(t testing.TB, pid int) status {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var st status
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch f[0] {
		case "VmRSS:":
			st.rss = n << 10
		case "RssAnon:":
			st.anon = n << 10
		case "VmHWM:":
			st.hwm = n << 10
		}
	}
	if st.rss == 0 {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return st
}

// BenchmarkStdioGCSettings is one get_pane_info call over stdio through a
// thin line client, with the server at the Go runtime's defaults
// (GOGC=100, no memory limit), at GC percent 400 without a limit (what
// the binary shipped before the memory limit), and at the shipped settings
// (nothing set: cli.ApplyGCSettings applies them). It reports the median
// call (p50-us) and the server's VmRSS at the end (rss-MB).
func BenchmarkStdioGCSettings(b *testing.B) {
	ts := tmuxtest.New(b)
	for _, v := range []struct{ name, env string }{
		{"runtime-default", "GOGC=100 GOMEMLIMIT=off"},
		{"gc400-nolimit", "GOGC=400 GOMEMLIMIT=off"},
		{"shipped", ""},
	} {
		b.Run(v.name, func(b *testing.B) {
			send, pid := startLineServer(b, serverCmd(ts, append([]string{"TMUX_MCP_AUDIT_LOG=/dev/null"}, strings.Fields(v.env)...)...))
			var durs []time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				resp := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%%0"}}}`, i))
				durs = append(durs, time.Since(start))
				if strings.Contains(resp, `"isError":true`) || strings.Contains(resp, `"error"`) {
					b.Fatal(resp)
				}
			}
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-us")
			b.ReportMetric(mb(procStatus(b, pid).rss), "rss-MB")
		})
	}
}
