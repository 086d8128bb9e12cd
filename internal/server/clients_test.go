package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// sessionsOf connects n in-memory clients to ms and returns the server
// side of each session.
func sessionsOf(t *testing.T, ms *mcp.Server, n int) ([]*mcp.ServerSession, []*mcp.ClientSession) {
	t.Helper()
	var sss []*mcp.ServerSession
	var css []*mcp.ClientSession
	for range n {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := ms.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close(); _ = ss.Close() })
		sss, css = append(sss, ss), append(css, cs)
	}
	return sss, css
}

// TestSubscriptionRefcount: sessions subscribed to one URI share one
// watch; it stops only when the last holder unsubscribes or ends, so one
// client's unsubscribe never stops another's notifications.
func TestSubscriptionRefcount(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	rs := newResourceState(e.srv)
	rs.ms = mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	sss, _ := sessionsOf(t, rs.ms, 3)
	a, b, c := sss[0], sss[1], sss[2]
	ctx := context.Background()
	const uri = "tmux://panes/%250/content"
	holders := func() int {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if w := rs.subs[uri]; w != nil {
			return len(w.holders)
		}
		return 0
	}
	sub := func(ss *mcp.ServerSession) {
		if err := rs.subscribe(ctx, &mcp.SubscribeRequest{Session: ss, Params: &mcp.SubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	unsub := func(ss *mcp.ServerSession) {
		if err := rs.unsubscribe(ctx, &mcp.UnsubscribeRequest{Session: ss, Params: &mcp.UnsubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"a subscribes", func() { sub(a) }, 1},
		{"b subscribes", func() { sub(b) }, 2},
		{"a subscribes again", func() { sub(a) }, 2},
		{"c subscribes", func() { sub(c) }, 3},
		{"b unsubscribes", func() { unsub(b) }, 2},
		{"b unsubscribes again", func() { unsub(b) }, 2},
		{"c's session ends", func() { _ = c.Close(); tmuxWait(t, func() bool { return holders() == 1 }) }, 1},
		{"a unsubscribes: the watch stops", func() { unsub(a) }, 0},
	}
	for _, st := range steps {
		st.do()
		if got := holders(); got != st.want {
			t.Fatalf("%s: %d holders, want %d", st.name, got, st.want)
		}
	}
	rs.mu.Lock()
	left := len(rs.subs)
	rs.mu.Unlock()
	if left != 0 {
		t.Errorf("%d watches left", left)
	}
}

// TestClientTierRefusal: an authenticated client whose token is below a
// visible tool's tier is refused at call time, the refusal audited with
// the client's name; tools/list still shows the server's tools.
func TestClientTierRefusal(t *testing.T) {
	base := newEnv(t)
	var buf bytes.Buffer
	srv, err := New(base.srv.cfg, Options{Tmux: base.srv.tmux, Audit: audit.New(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	ms := srv.MCP()
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(WithClient(ctx, Client{Name: "reader", Tier: config.Readonly}), method, req)
		}
	})
	_, css := sessionsOf(t, ms, 1)
	cs := css[0]
	ctx := context.Background()
	listed := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = true
	}
	if !listed["send_keys"] || !listed["kill_pane"] {
		t.Errorf("tools/list hides tools above the token's tier")
	}
	tests := []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{"get_pane_info", map[string]any{"pane_id": "%0"}, false},
		{"send_keys", map[string]any{"pane_id": "%0", "keys": "echo x"}, true},
		{"kill_pane", map[string]any{"pane_id": "%0"}, true},
	}
	for _, tc := range tests {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		got := res.IsError && strings.Contains(text(res), "limited to readonly")
		if got != tc.refused {
			t.Errorf("%s: refused %v, want %v: %s", tc.tool, got, tc.refused, text(res))
		}
	}
	var recs []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 3 {
		t.Fatalf("%d audit records, want 3", len(recs))
	}
	for i, r := range recs {
		if r.Identity != "reader" || r.Tool != tests[i].tool || (r.Outcome == "error") != tests[i].refused {
			t.Errorf("audit record %d: %+v", i, r)
		}
	}
}

// TestReleaseOwner: a client's run_ids and cursors are gone once its
// state is released; another client's are untouched.
func TestReleaseOwner(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	e.tmux.MustRun("split-window", "-t", "%0", "sh")
	s := e.srv
	ctx := context.Background()
	call := func(owner Owner, name string, args map[string]any, out any) *mcp.CallToolResult {
		t.Helper()
		raw, _ := json.Marshal(args)
		res := s.invoke(WithOwner(ctx, owner), s.tool(name), nil, raw, "")
		if out != nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, out)
		}
		return res
	}
	type runOut struct {
		RunID *string `json:"run_id"`
	}
	type sinceOut struct {
		Cursor      string `json:"cursor"`
		LinesMissed bool   `json:"lines_missed"`
	}
	runs, cursors := map[Owner]string{}, map[Owner]string{}
	for owner, pane := range map[Owner]string{"a": "%0", "b": "%1"} {
		var r runOut
		if res := call(owner, "run_command", map[string]any{"pane_id": pane, "command": "sleep 2", "timeout": 0.3}, &r); res.IsError || r.RunID == nil {
			t.Fatalf("run_command: %s", text(res))
		}
		runs[owner] = *r.RunID
		var c sinceOut
		call(owner, "capture_since", map[string]any{"pane_id": pane}, &c)
		cursors[owner] = c.Cursor
	}
	if err := s.ReleaseOwner(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner Owner
		gone  bool
	}{{"a", true}, {"b", false}} {
		res := call(tc.owner, "wait_for_run", map[string]any{"run_id": runs[tc.owner], "timeout": 5}, nil)
		if gone := res.IsError && strings.Contains(text(res), "unknown run_id"); gone != tc.gone {
			t.Errorf("owner %s: run gone %v, want %v: %s", tc.owner, gone, tc.gone, text(res))
		}
		var c sinceOut
		call(tc.owner, "capture_since", map[string]any{"cursor": cursors[tc.owner]}, &c)
		if c.LinesMissed != tc.gone {
			t.Errorf("owner %s: cursor forgotten %v, want %v", tc.owner, c.LinesMissed, tc.gone)
		}
	}
}
