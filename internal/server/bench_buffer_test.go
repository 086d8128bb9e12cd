package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkLoadBuffer3MB is one load_buffer of 3 MB (the size
// TestShowBufferOverResultCap loads) through the whole server: locally over
// each engine, and on a remote host over a loopback sshd, in the same run.
// One load before the clock starts brings up the host's connection; each
// buffer is deleted outside the timed part. p50-ms is the median call.
func BenchmarkLoadBuffer3MB(b *testing.B) {
	content := strings.Repeat("x", 3_000_000)
	for _, where := range []string{"local-control", "local-exec", "ssh"} {
		b.Run(where, func(b *testing.B) {
			ts := tmuxtest.New(b)
			var e *env
			switch where {
			case "ssh":
				cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive,
					WaitMax: config.DefaultWaitMax, SuppressHistory: true}
				e = newSSHEnv(b, ts, cfg)
			case "local-exec":
				e = benchEnv(b, ts, "exec")
			default:
				e = benchEnv(b, ts, "control")
			}
			call := func(name string, args map[string]any) *mcp.CallToolResult {
				var a any = args
				if e.host != "" {
					a = e.onHost(name, args)
				}
				res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: a})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %s", name, err, text(res))
				}
				return res
			}
			load := func() time.Duration {
				start := time.Now()
				res := call("load_buffer", map[string]any{"content": content})
				took := time.Since(start)
				name, _ := res.StructuredContent.(map[string]any)["buffer_name"].(string)
				b.StopTimer()
				call("delete_buffer", map[string]any{"buffer_name": name})
				b.StartTimer()
				return took
			}
			load()
			b.SetBytes(int64(len(content)))
			var durs []time.Duration
			for b.Loop() {
				durs = append(durs, load())
			}
			b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
		})
	}
}

// BenchmarkLoadBufferSizes is where maxPiecedContent comes from: on a
// remote host over a loopback sshd, the tmux part of a load by size, set
// in pieces over the control connection (one round trip) or streamed to
// load-buffer's stdin on a channel of its own, in the same run.
func BenchmarkLoadBufferSizes(b *testing.B) {
	ts := tmuxtest.New(b)
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive,
		WaitMax: config.DefaultWaitMax, SuppressHistory: true}
	e := newSSHEnv(b, ts, cfg)
	eng, err := e.srv.hosts.Get(e.host)
	if err != nil {
		b.Fatal(err)
	}
	sock := eng.Host.Socket(tmux.Socket{})
	ctx := context.Background()
	for _, kib := range []int{9, 128, 256, 512, 1024, 2048} {
		content := strings.Repeat("x", kib<<10)
		for _, how := range []string{"pieces", "streamed"} {
			b.Run(fmt.Sprintf("%dKiB-%s", kib, how), func(b *testing.B) {
				var durs []time.Duration
				for b.Loop() {
					start := time.Now()
					var err error
					if how == "pieces" {
						_, err = eng.Client.Run(ctx, sock, setPieces("bench", content)...)
					} else {
						err = eng.Client.LoadBuffer(ctx, sock, "bench", content)
					}
					durs = append(durs, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(median(durs).Microseconds())/1000, "p50-ms")
			})
		}
	}
}
