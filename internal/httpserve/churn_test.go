package httpserve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

const churnToken = "churn-token-aaaaaaaaaaaaaaaa"

// churnClient authenticates as churnToken on a transport that keeps no
// idle connection, so a finished client leaves no connection (and no
// server goroutine) behind.
func churnClient() *http.Client {
	return &http.Client{Transport: bearerRT{token: churnToken, base: &http.Transport{DisableKeepAlives: true}}}
}

// churnServer is a server for one isolated tmux server (its pane is pane)
// and the checker of churnToken.
func churnServer(t testing.TB) (srv *server.Server, st *StaticTokens, pane string) {
	t.Helper()
	ts := tmuxtest.New(t)
	pane = strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "main:0.0", "#{pane_id}"))
	cfg := config.Config{Safety: config.Mutating, TmuxBin: ts.Bin, SocketName: ts.Socket.Name, Engine: "control"}
	srv, err := server.New(cfg, server.Options{Audit: audit.New(io.Discard), ChildEnv: tmuxtest.CleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	st, err = ParseTokens(strings.NewReader(churnToken+" churn\n"), config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	return srv, st, pane
}

// churnDaemon serves one tmux server (its pane is pane) through the whole
// HTTP handler, with the given idle timeout and checkers (none: churnToken
// is the only token).
func churnDaemon(t *testing.T, idle time.Duration, checkers ...TokenChecker) (d *Daemon, hs *httptest.Server, pane string) {
	t.Helper()
	srv, st, pane := churnServer(t)
	if len(checkers) == 0 {
		checkers = []TokenChecker{st}
	}
	d, err := New(Options{Server: srv, Checkers: checkers, HTTP: config.HTTP{IdleTimeout: idle}})
	if err != nil {
		t.Fatal(err)
	}
	hs = httptest.NewServer(nil)
	d.origins.addLoopback(hs.Listener.Addr(), false)
	hs.Config.Handler = d.Handler()
	t.Cleanup(hs.Close)
	return d, hs, pane
}

// TestSessionsLeaveNothingBehind: a daemon left running for days serves
// clients that come and go. Rounds of sessions that end by DELETE (an SDK
// client's Close, after a call and a resource subscription) and of
// sessions abandoned after a call (ended by the idle timeout) leave
// nothing behind: no live session, no event store entry, no in-flight
// count, and the goroutine count back where it was.
func TestSessionsLeaveNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("several rounds of sessions")
	}
	const idle = 700 * time.Millisecond
	d, hs, pane := churnDaemon(t, idle)
	client := churnClient()
	ctx := context.Background()
	call := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": pane}}

	closed := func() {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + Endpoint, MaxRetries: -1, HTTPClient: client}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "churn", Version: "0"}, nil).
			Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
			t.Fatalf("get_pane_info: %v %v", err, res)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "tmux://panes/" + strings.ReplaceAll(pane, "%", "%25") + "/content"}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if err := cs.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	}
	abandoned := func() {
		post := func(sid, body string) string {
			req, _ := http.NewRequest(http.MethodPost, hs.URL+Endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			if sid != "" {
				req.Header.Set(headerSessionID, sid)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 || (strings.Contains(body, `"id"`) && !bytes.Contains(b, []byte(`"result"`))) {
				t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
			}
			return resp.Header.Get(headerSessionID)
		}
		sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gone","version":"0"}}}`)
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":%q}}}`, pane))
		// ...and the client is gone without a DELETE.
	}
	// settled waits until every session has ended and been released and
	// the goroutine count is at most want (any, when want < 0), and
	// reports what remains.
	settled := func(want int) (live, streams, inflight, goroutines int) {
		deadline := time.Now().Add(idle + 10*time.Second)
		t0 := time.Now()
		defer func() { t.Logf("settled in %v", time.Since(t0)) }()
		for {
			d.sessions.mu.Lock()
			live = len(d.sessions.live) + d.sessions.pending
			d.sessions.mu.Unlock()
			streams, _, _ = d.events.Stats()
			d.limits.mu.Lock()
			inflight = len(d.limits.n)
			d.limits.mu.Unlock()
			goroutines = runtime.NumGoroutine()
			if live+streams+inflight == 0 && (want < 0 || goroutines <= want) || time.Now().After(deadline) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// The control connection and first resolution; no subscription yet, so
	// a pane watch that outlives its subscribers counts against the rounds.
	abandoned()
	settled(-1)
	time.Sleep(200 * time.Millisecond) // released sessions' goroutines end
	base := runtime.NumGoroutine()
	// Each round settles in about 5 s: a pane watch stays attached that
	// long after its last subscriber leaves (tmux.watchIdle).
	for round := range 2 {
		for range 25 {
			closed()
			abandoned()
		}
		live, streams, inflight, g := settled(base)
		t.Logf("round %d, 25 closed and 25 abandoned sessions later: %d live sessions, %d event streams, %d in-flight counts, %d goroutines (%d before)",
			round, live, streams, inflight, g, base)
		if live != 0 || streams != 0 || inflight != 0 || g > base {
			buf := make([]byte, 1<<20)
			t.Fatalf("left behind: %d live sessions, %d event streams, %d in-flight counts, %d goroutines (%d before)\n%s",
				live, streams, inflight, g, base, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestListeningSessionOutlivesIdleTimeout: a client that holds its GET
// stream open and makes no call for several idle timeouts keeps its
// session (the server's pings, answered on the stream, count as activity),
// while a client with no stream open is still expired on time.
func TestListeningSessionOutlivesIdleTimeout(t *testing.T) {
	const idle = 1500 * time.Millisecond // pings every 500 ms
	_, hs, pane := churnDaemon(t, idle)
	ctx := context.Background()
	connect := func(noStream bool) *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + Endpoint, MaxRetries: -1, DisableStandaloneSSE: noStream,
			HTTPClient: churnClient()}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "0"}, nil).
			Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	listening, silent := connect(false), connect(true)
	call := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": pane}}
	time.Sleep(3 * idle)
	if res, err := listening.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("the listening client after %v without a call: %v %v; want its session alive", 3*idle, err, res)
	}
	if _, err := silent.CallTool(ctx, call); err == nil {
		t.Errorf("the client without a stream after %v without a call: its session is still alive; want it expired", 3*idle)
	}
}
