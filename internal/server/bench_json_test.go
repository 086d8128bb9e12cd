package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkJSONCost separates what a get_pane_info call costs in the Go
// SDK's JSON handling from what it costs in our code and in tmux. The
// floor is a no-op tool, registered only here, that returns the very bytes
// a get_pane_info call returns, through the same in-memory client and
// server: everything the SDK does per call and nothing else. Both run at
// the runtime's default GC percent (100) and at the percent the shipped
// binary sets (cli.ApplyGCSettings), so the before/after is in one run.
// Besides ns/op and allocs it reports p50-us (the median call) and
// gc-cycles/op (collections started per call).
func BenchmarkJSONCost(b *testing.B) {
	cs, info, noop := benchFloor(b, tmuxtest.New(b))
	ctx := context.Background()
	for _, gc := range []int{100, 400} {
		for _, c := range []struct {
			name string
			args *mcp.CallToolParams
		}{{"floor-noop", noop}, {"get_pane_info", info}} {
			b.Run(fmt.Sprintf("%s/gc=%d", c.name, gc), func(b *testing.B) {
				old := debug.SetGCPercent(gc)
				defer debug.SetGCPercent(old)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				durs := make([]time.Duration, 0, 1024)
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					res, err := cs.CallTool(ctx, c.args)
					durs = append(durs, time.Since(start))
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
				runtime.ReadMemStats(&after)
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-us")
				b.ReportMetric(float64(after.NumGC-before.NumGC)/float64(len(durs)), "gc-cycles/op")
			})
		}
	}
}

// connectBench connects a Go SDK client to ms over in-memory transports.
func connectBench(b *testing.B, ms *mcp.Server) *mcp.ClientSession {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// benchFloor serves get_pane_info on ts's server and, beside it, the floor:
// a no-op tool that answers one real get_pane_info answer verbatim, read
// through the same SDK server before the floor tool exists. The two
// parameter sets call each through the returned client.
func benchFloor(b *testing.B, ts *tmuxtest.Server) (cs *mcp.ClientSession, info, noop *mcp.CallToolParams) {
	b.Helper()
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: 30, SuppressHistory: true}
	cr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
	b.Cleanup(func() { _ = cr.Close() })
	srv, err := New(cfg, Options{Tmux: &tmux.Client{Runner: cr}, Logger: slog.New(slog.DiscardHandler), ChildEnv: tmuxtest.CleanEnv()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.watch.CloseAll)
	ctx := context.Background()
	ms := srv.MCP()
	cs = connectBench(b, ms)
	info = &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%0"}}
	first, err := cs.CallTool(ctx, info) // also connects the engine
	if err != nil || first.IsError {
		b.Fatal(err, first)
	}
	structured, err := json.Marshal(first.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	// The gate answers names missing from the server's table as unknown
	// tools (unknownName): the floor gets a visible entry there too, so its
	// calls pass the same middleware as get_pane_info's.
	floor := &Tool{Name: "bench_noop"}
	srv.all = append(srv.all, floor)
	srv.visible[floor.Name] = floor
	ms.AddTool(&mcp.Tool{Name: floor.Name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: first.Content, StructuredContent: json.RawMessage(structured), Meta: first.Meta}, nil
		})
	noop = &mcp.CallToolParams{Name: "bench_noop", Arguments: map[string]any{"pane_id": "%0"}}
	if res, err := cs.CallTool(ctx, noop); err != nil || res.IsError || text(res) != text(first) {
		b.Fatalf("floor tool: %v %+v", err, res)
	}
	return cs, info, noop
}
