package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics/scrape"
)

// TestCounting enables a registry, counts through the package functions
// as the server does, and reads the exposition back with the strict
// parser: every value must be what was counted, and nothing else moved.
func TestCounting(t *testing.T) {
	r := New([]string{"get_pane_info", "kill_pane", "bad\"name"})
	if Enabled() {
		t.Fatal("enabled before Enable")
	}
	CallStarted() // off: no effect, no panic
	Enable(r)
	t.Cleanup(func() { on.Store(nil) })

	for range 3 {
		CallStarted()
		CallEnded("get_pane_info", OK, 2*time.Millisecond)
	}
	CallStarted()
	CallEnded("get_pane_info", ToolError, 40*time.Millisecond)
	Call("kill_pane", Refused, 0)
	Call("bad\"name", OK, 0) // not a plain name: never a label
	Call("no_such_tool", OK, 0)
	UnknownTool()
	CallStarted() // still running at the scrape
	SessionOpened()
	SessionOpened()
	SessionClosed()
	ControlStarted()
	ControlStarted()
	ControlEnded()
	t.Cleanup(ControlEnded)
	ControlReconnected()
	HostStates(func() (int, int, int) { return 2, 1, 3 })
	Confirmation(Accept)
	Confirmation(Decline)
	Confirmation(Decline)
	Confirmation(Unsupported)
	TokensRevoked(2)
	TokensRevoked(0)

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	e, err := scrape.Parse(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, r)
	}
	tool := func(name, outcome string) map[string]string {
		m := map[string]string{"tool": name}
		if outcome != "" {
			m["outcome"] = outcome
		}
		return m
	}
	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{NameCalls, tool("get_pane_info", "ok"), 3},
		{NameCalls, tool("get_pane_info", "tool_error"), 1},
		{NameCalls, tool("kill_pane", "refused"), 1},
		{NameCalls, tool("kill_pane", "ok"), 0},
		{NameLatency + "_count", tool("get_pane_info", ""), 4},
		{NameLatency + "_bucket", map[string]string{"tool": "get_pane_info", "le": "0.0025"}, 3},
		{NameLatency + "_bucket", map[string]string{"tool": "get_pane_info", "le": "0.05"}, 4},
		{NameLatency + "_count", tool("kill_pane", ""), 1},
		{NameInFlight, nil, 1},
		{NameUnknownTool, nil, 3},
		{NameSessions, nil, 1},
		{NameSessionsTotal, nil, 2},
		{NameControlConns, nil, 1},
		{NameReconnects, nil, 1},
		{NameHostsUp, nil, 2},
		{NameHostsDown, nil, 1},
		{NameHostsIdle, nil, 3},
		{NameConfirmations, map[string]string{"outcome": "accept"}, 1},
		{NameConfirmations, map[string]string{"outcome": "decline"}, 2},
		{NameConfirmations, map[string]string{"outcome": "cancel"}, 0},
		{NameConfirmations, map[string]string{"outcome": "unsupported"}, 1},
		{NameTokensRevoked, nil, 2},
	}
	for _, w := range want {
		got, ok := e.Value(w.name, w.labels)
		if !ok || got != w.value {
			t.Errorf("%s%v = %v (present %v), want %v", w.name, w.labels, got, ok, w.value)
		}
	}
	if _, ok := e.Value(NameCalls, tool("get_pane_info", "timeout")); ok {
		t.Errorf("an outcome never seen is listed")
	}
	if strings.Contains(r.String(), "bad") || strings.Contains(r.String(), "no_such_tool") {
		t.Errorf("a name outside the plain registry names became a label:\n%s", r)
	}
	for _, f := range e.Families {
		if f.Help == "" {
			t.Errorf("%s has no HELP text", f.Name)
		}
	}
}

// TestOffIsFree: with metrics off, the functions the server calls on
// every tool call allocate nothing.
func TestOffIsFree(t *testing.T) {
	if Enabled() {
		t.Fatal("enabled")
	}
	allocs := testing.AllocsPerRun(1000, func() {
		CallStarted()
		CallEnded("get_pane_info", OK, time.Millisecond)
		Call("x", Refused, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call with metrics off", allocs)
	}
}

func TestMethod(t *testing.T) {
	rec := httptest.NewRecorder()
	New(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST answered %d", rec.Code)
	}
}

// BenchmarkCallOff is what a tool call pays for metrics when they are off.
func BenchmarkCallOff(b *testing.B) {
	for b.Loop() {
		CallStarted()
		CallEnded("get_pane_info", OK, time.Millisecond)
	}
}

// BenchmarkCallOn is the same with metrics on.
func BenchmarkCallOn(b *testing.B) {
	Enable(New([]string{"get_pane_info"}))
	b.Cleanup(func() { on.Store(nil) })
	for b.Loop() {
		CallStarted()
		CallEnded("get_pane_info", OK, time.Millisecond)
	}
}
