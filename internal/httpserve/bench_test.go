package httpserve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// benchClients is the load test's client count (e2e/http_load_test.go).
const benchClients = 50

// BenchmarkHTTPGetPaneInfo is the HTTP load test's throughput phase in one
// process, for profiling: benchClients SDK clients, each with its own
// token, session (2025-11-25) or none (2026-07-28) and tmux pane, call
// get_pane_info on their own pane at once through the whole handler
// (Origin check, body cap, authentication, limits, request log as JSON,
// audit) with the control-mode engine, as `serve --http` runs it. It
// reports calls/s and the p50/p99 latency of the calls; the profile
// includes the clients' side.
func BenchmarkHTTPGetPaneInfo(b *testing.B) {
	ts := tmuxtest.NewWith(b)
	var lines strings.Builder
	panes := make([]string, benchClients)
	for i := range panes {
		name := fmt.Sprintf("c%02d", i)
		panes[i] = ts.MustRun("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-P", "-F", "#{pane_id}", "sh")
		fmt.Fprintf(&lines, "tok-%02d-aaaaaaaaaaaaaaaaaaaa %s\n", i, name)
	}
	cfg := config.Config{Safety: config.Mutating, TmuxBin: ts.Bin, SocketName: ts.Socket.Name, Engine: "control"}
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := server.New(cfg, server.Options{Logger: logger, Audit: audit.New(io.Discard), ChildEnv: tmuxtest.CleanEnv()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close(context.Background()) })
	st, err := ParseTokens(strings.NewReader(lines.String()), config.Mutating)
	if err != nil {
		b.Fatal(err)
	}
	d, err := New(Options{Server: srv, Checkers: []TokenChecker{st}, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(nil)
	d.origins.addLoopback(hs.Listener.Addr(), false)
	hs.Config.Handler = d.Handler()
	b.Cleanup(hs.Close)

	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(proto, func(b *testing.B) {
			ctx := context.Background()
			sessions := make([]*mcp.ClientSession, benchClients)
			for i := range sessions {
				tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + Endpoint, MaxRetries: -1,
					HTTPClient: &http.Client{Transport: bearerRT{token: fmt.Sprintf("tok-%02d-aaaaaaaaaaaaaaaaaaaa", i)}}}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
					Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: proto})
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions[i] = cs
				// One call each first: the control connection and the
				// first resolution are not what is measured.
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": panes[i]}}); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			lat := make([][]time.Duration, benchClients)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": panes[i]}})
						if err != nil || res.IsError {
							b.Errorf("client %d: %v %v", i, err, res)
							return
						}
						lat[i] = append(lat[i], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			wall := time.Since(start)
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			if len(all) > 0 {
				b.ReportMetric(float64(len(all))/wall.Seconds(), "calls/s")
				b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// BenchmarkGuard is our own share of every /mcp request: the request log,
// Origin check, body cap, authentication against benchClients tokens, the
// SDK's token binding and the limits, in front of a handler that does
// nothing, for a get_pane_info call of a 2025-11-25 session.
func BenchmarkGuard(b *testing.B) {
	var lines strings.Builder
	for i := 0; i < benchClients; i++ {
		fmt.Fprintf(&lines, "tok-%02d-aaaaaaaaaaaaaaaaaaaa c%02d\n", i, i)
	}
	st, err := ParseTokens(strings.NewReader(lines.String()), config.Mutating)
	if err != nil {
		b.Fatal(err)
	}
	d := &Daemon{
		opts:     Options{Checkers: []TokenChecker{st}, MaxBodyBytes: DefaultMaxBodyBytes},
		log:      slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
		limits:   newInflightTable(config.DefaultMaxInFlight),
		sessions: newSessionTable(config.DefaultMaxSessions, nil),
		origins:  newOriginPolicy(nil),
	}
	mux := http.NewServeMux()
	mux.Handle(Endpoint, d.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})))
	h := d.logRequests(mux)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := guardBenchRequest()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkGuardRequestOnly is the request and recorder that
// BenchmarkGuard builds each time, without the handler: subtract it.
func BenchmarkGuardRequestOnly(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = guardBenchRequest()
		w := httptest.NewRecorder()
		w.WriteHeader(http.StatusOK)
	}
}

// guardBenchRequest is the get_pane_info POST both guard benchmarks send.
func guardBenchRequest() *http.Request {
	body := `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%49"}}}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8765/mcp", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer tok-49-aaaaaaaaaaaaaaaaaaaa")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return r
}

// BenchmarkHTTPLoadBufferLarge is one load_buffer of 3.9 MiB (the largest
// legitimate request body) on a 2025-11-25 session through the whole
// handler over loopback HTTP, the client a plain POST so that what is
// allocated is the server's: B/op against the body's size is the figure
// (issue 21 item 9). Each buffer is deleted in the same iteration.
func BenchmarkHTTPLoadBufferLarge(b *testing.B) {
	srv, st, _ := churnServer(b)
	d, err := New(Options{Server: srv, Checkers: []TokenChecker{st}})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(nil)
	d.origins.addLoopback(hs.Listener.Addr(), false)
	hs.Config.Handler = d.Handler()
	b.Cleanup(hs.Close)
	client := churnClient()
	post := func(sid, body string) (string, string) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+Endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), string(out)
	}
	sid, out := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	if sid == "" {
		b.Fatalf("initialize: %s", out)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	content := strings.Repeat(strings.Repeat("x", 80)+`\n`, 3900*1024/81)
	load := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_buffer","arguments":{"content":"` + content + `"}}}`
	b.SetBytes(int64(len(load)))
	b.ReportAllocs()
	for b.Loop() {
		_, out := post(sid, load)
		i := strings.Index(out, `"buffer_name":"`)
		if i < 0 {
			b.Fatalf("load_buffer: %.300s", out)
		}
		name, _, _ := strings.Cut(out[i+len(`"buffer_name":"`):], `"`)
		if _, out := post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_buffer","arguments":{"buffer_name":"`+name+`"}}}`); strings.Contains(out, `"isError":true`) {
			b.Fatalf("delete_buffer: %.300s", out)
		}
	}
}
