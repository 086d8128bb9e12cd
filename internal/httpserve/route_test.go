package httpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// bearerRT authenticates as token over base (nil: http.DefaultTransport).
type bearerRT struct {
	token string
	base  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.base == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return b.base.RoundTrip(r)
}

// sessionSpy records whether responses carried Mcp-Session-Id.
type sessionSpy struct {
	mu   sync.Mutex
	ids  map[string]bool
	base http.RoundTripper
}

func (s *sessionSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		if id := resp.Header.Get(headerSessionID); id != "" {
			s.ids[id] = true
		}
		s.mu.Unlock()
	}
	return resp, err
}

// TestRouting: through the whole handler, a Go SDK client forced to
// 2025-11-25 gets a session (Mcp-Session-Id), one left at its default
// negotiates 2026-07-28 and gets none; both list the same tools.
func TestRouting(t *testing.T) {
	srv, err := server.New(config.Config{Safety: config.Mutating, TmuxBin: "tmux", Engine: "exec"}, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := ParseTokens(strings.NewReader("aaaaaaaaaaaaaaaaaaaa alice\n"), config.Mutating)
	d, err := New(Options{Server: srv, Checkers: []TokenChecker{st}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(nil)
	d.origins.addLoopback(ts.Listener.Addr(), false)
	ts.Config.Handler = d.Handler()
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tests := []struct {
		version     string // forced version; "" is the client's default
		negotiated  string
		withSession bool
	}{
		{"2025-11-25", "2025-11-25", true},
		{"2025-06-18", "2025-06-18", true},
		{"", "2026-07-28", false},
	}
	counts := map[string]int{}
	for _, tc := range tests {
		spy := &sessionSpy{ids: map[string]bool{}, base: bearerRT{token: "aaaaaaaaaaaaaaaaaaaa"}}
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + Endpoint, HTTPClient: &http.Client{Transport: spy}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "route", Version: "0"}, nil).
			Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
		if err != nil {
			t.Fatalf("%q: connect: %v", tc.version, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != tc.negotiated {
			t.Errorf("%q: negotiated %s, want %s", tc.version, got, tc.negotiated)
		}
		n := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		counts[tc.negotiated] = n
		spy.mu.Lock()
		got := len(spy.ids) > 0
		spy.mu.Unlock()
		if got != tc.withSession {
			t.Errorf("%q: session %v, want %v", tc.version, got, tc.withSession)
		}
		_ = cs.Close()
	}
	if counts["2025-11-25"] == 0 || counts["2025-11-25"] != counts["2026-07-28"] {
		t.Errorf("tools/list differs between generations: %v", counts)
	}
	// The stateless handler alone would answer a legacy GET stream with 405;
	// through the router it reaches the stateful handler (400: no session).
	req, _ := http.NewRequest(http.MethodGet, ts.URL+Endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer aaaaaaaaaaaaaaaaaaaa")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET without a session: %d", resp.StatusCode)
	}
}
