package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkListPanesWholeServer is list_panes over the whole server at 50,
// 200 and 500 panes, side by side in the same run with Kcrong/tmux-mcp's
// whole-server listing (its list_panes with no session: one exec'd
// `tmux list-panes -a` of 7 fields) when TMUX_MCP_PEER_KCRONG names its
// binary, and with another tmux-mcp binary when TMUX_MCP_BENCH_BASE names
// one (say, a build of main: the before of a change). Every server runs at
// once on the same tmux server, driven by the same raw JSON-RPC line
// client, and calls alternate between them in short blocks (at most
// blockCalls calls or blockTime each, several rounds), so a ratio compares
// the servers and not the machine's mood over a long stretch.
//
// Half the panes run a shell at its prompt, half sleep, in windows of ten
// panes. Each size reports every server's median call (NAME-p50-ms) and
// answer size (NAME-bytes), and tmux-mcp's median over each other's
// (ours/NAME). Kcrong kills the tmux server it used when it exits; the
// server is the benchmark's own, killed at its end anyway.
func BenchmarkListPanesWholeServer(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 500-pane server")
	}
	ts := tmuxtest.New(b)
	type srv struct {
		name, call string
		send       func(string) string
	}
	servers := []*srv{{name: "ours", call: `"name":"list_panes","arguments":{}`}}
	servers[0].send, _ = startLineServer(b, serverCmd(ts, "TMUX_MCP_AUDIT_LOG=/dev/null"))
	if bin := os.Getenv("TMUX_MCP_BENCH_BASE"); bin != "" {
		cmd := exec.Command(bin)
		cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin, "TMUX_MCP_AUDIT_LOG=/dev/null")
		s := &srv{name: "base", call: servers[0].call}
		s.send, _ = startLineServer(b, cmd)
		servers = append(servers, s)
	}
	if bin := os.Getenv("TMUX_MCP_PEER_KCRONG"); bin != "" {
		cmd := exec.Command(bin)
		cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.SocketPath(), "TMUX_MCP_TMUX_BIN="+ts.Bin)
		s := &srv{name: "kcrong", call: `"name":"list_panes","arguments":{}`}
		s.send, _ = startLineServer(b, cmd)
		servers = append(servers, s)
	}
	panes := 1
	grow := func(want int) {
		panes = ts.GrowPanes(panes, want)
		time.Sleep(time.Duration(want) * 2 * time.Millisecond) // the shells start
	}
	const (
		rounds     = 5
		blockCalls = 60
		blockTime  = 2 * time.Second
	)
	id := 1
	for _, size := range []int{50, 200, 500} {
		grow(size)
		b.Run(fmt.Sprintf("panes-%d", size), func(b *testing.B) {
			for b.Loop() {
				times := map[string][]float64{}
				bytes := map[string]int{}
				for range rounds {
					for _, s := range servers {
						start := time.Now()
						for i := 0; i < blockCalls && time.Since(start) < blockTime; i++ {
							id++
							t0 := time.Now()
							resp := s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, id, s.call))
							d := time.Since(t0)
							if strings.Contains(resp, `"isError":true`) || !strings.Contains(resp, `"result"`) {
								b.Fatalf("%s: %.300s", s.name, resp)
							}
							if s.name != "kcrong" && strings.Count(resp, `"pane_id"`) < size {
								b.Fatalf("%s: fewer than %d panes: %.300s", s.name, size, resp)
							}
							if i > 0 { // the first call of a block warms it up
								times[s.name] = append(times[s.name], float64(d.Microseconds())/1000)
							}
							bytes[s.name] = len(resp)
						}
					}
				}
				p50 := map[string]float64{}
				for _, s := range servers {
					xs := times[s.name]
					slices.Sort(xs)
					p50[s.name] = xs[len(xs)/2]
					b.ReportMetric(p50[s.name], s.name+"-p50-ms")
					b.ReportMetric(float64(bytes[s.name]), s.name+"-bytes")
				}
				for _, s := range servers[1:] {
					b.ReportMetric(p50["ours"]/p50[s.name], "ours/"+s.name)
				}
			}
		})
	}
}
