package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Scope (issue 23 item 1) through the built binary.

// sessionNames lists the sessions a client sees.
func sessionNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res := callOK(t, cs, "list_sessions", map[string]any{})
	var rows []struct {
		SessionName string `json:"session_name"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &rows); err != nil {
		t.Fatalf("list_sessions: %v: %s", err, resultText(res))
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.SessionName)
	}
	return out
}

func ownerOf(t *testing.T, ts *tmuxtest.Server, session string) string {
	t.Helper()
	return strings.TrimSpace(ts.MustRun("show-options", "-t", "="+session+":", "-v", "@tmux-mcp-owner"))
}

// TestHTTPScopes: one daemon, four tokens. alice and bob have own (each
// sees only the sessions it made), ci has sessions=ci-* (it cannot make
// another), and ops names no scope, so the daemon's --scope
// (sessions=shared) confines it. The person's session is nobody's. Both
// protocol generations.
func TestHTTPScopes(t *testing.T) {
	ts := tmuxtest.New(t) // "main": the person's
	dir := t.TempDir()
	alice, bob, ci, ops := newToken(), newToken(), newToken(), newToken()
	body := alice + " alice mutating own\n" + bob + " bob destructive own\n" + ci + " ci mutating sessions=ci-*\n" + ops + " ops\n"
	path := filepath.Join(dir, "tokens")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHTTPD(t, ts, []string{"--tokens-file", path, "--scope", "sessions=shared", "--safety", "destructive"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func(token, version string) *mcp.ClientSession {
		cs, err := dialHTTPD(ctx, h, token, version, nil)
		if err != nil {
			t.Fatalf("dial: %v\n%s", err, tail(h.log.String(), 2000))
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := dial(alice, legacyVersion), dial(bob, statelessVersion)
	c, o := dial(ci, statelessVersion), dial(ops, legacyVersion)
	for cs, name := range map[*mcp.ClientSession]string{a: "alice-1", b: "bob-1", c: "ci-build", o: "shared"} {
		callOK(t, cs, "create_session", map[string]any{"session_name": name})
	}
	for _, who := range []struct{ session, owner string }{{"alice-1", "alice"}, {"bob-1", "bob"}, {"ci-build", "ci"}, {"shared", "ops"}} {
		if got := ownerOf(t, ts, who.session); got != who.owner {
			t.Errorf("%s: owner mark %q, want %q", who.session, got, who.owner)
		}
	}
	for cs, want := range map[*mcp.ClientSession][]string{a: {"alice-1"}, b: {"bob-1"}, c: {"ci-build"}, o: {"shared"}} {
		if got := sessionNames(t, cs); !slices.Equal(got, want) {
			t.Errorf("sees %v, want %v", got, want)
		}
	}
	// alice reaches nothing of bob's: by name, by id, by a resource,
	// through a batch, and bob's kill of alice's session finds nothing.
	bobID := strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "=bob-1:", "#{session_id}"))
	bobPane := strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "=bob-1:", "#{pane_id}"))
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_session_info", map[string]any{"session_name": "bob-1"}},
		{"get_session_info", map[string]any{"session_id": bobID}},
		{"send_keys", map[string]any{"pane_id": bobPane, "keys": "echo hi"}},
		{"capture_pane", map[string]any{"pane_id": bobPane}},
		{"call_mutating_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "capture_pane", "arguments": map[string]any{"pane_id": bobPane}}}}},
	} {
		res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatal(err)
		}
		txt := resultText(res)
		if !strings.Contains(txt, "not found") || strings.Contains(txt, "bob-1") && call.args["session_name"] == nil {
			t.Errorf("alice %s(%v): %s", call.tool, call.args, txt)
		}
	}
	if _, err := a.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://sessions/bob-1"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("alice reads bob's session resource: %v", err)
	}
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "kill_session", Arguments: map[string]any{"session_name": "alice-1"}})
	if err != nil || !res.IsError || res.Meta["error_type"] != "TmuxObjectDoesNotExist" {
		t.Errorf("bob kills alice's session: %v %s", err, resultText(res))
	}
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"session_name": "elsewhere"}})
	if err != nil || !res.IsError || res.Meta["error_type"] != "OutOfScope" {
		t.Errorf("ci makes a session outside its scope: %v %s", err, resultText(res))
	}
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "kill_server", Arguments: map[string]any{}})
	if err != nil || !res.IsError || res.Meta["error_type"] != "OutOfScope" {
		t.Errorf("bob's kill_server under a scope: %v %s", err, resultText(res))
	}
	if out := ts.MustRun("list-sessions", "-F", "#{session_name}"); out != "alice-1\nbob-1\nci-build\nmain\nshared" {
		t.Errorf("sessions now: %q", out)
	}
}

// TestStdioScopeOwn: TMUX_MCP_SCOPE=own over stdio. The person's session
// is invisible; what the agent makes carries the "stdio" owner mark, and
// a new tmux-mcp process (a client restart) finds it again by that mark.
func TestStdioScopeOwn(t *testing.T) {
	ts := tmuxtest.New(t)
	cs := connect(t, serverCmd(ts, "TMUX_MCP_SCOPE=own"))
	if got := sessionNames(t, cs); len(got) != 0 {
		t.Fatalf("sees %v before making anything", got)
	}
	callOK(t, cs, "create_session", map[string]any{"session_name": "agent"})
	if got := ownerOf(t, ts, "agent"); got != "stdio" {
		t.Fatalf("owner mark %q", got)
	}
	_ = cs.Close()
	again := connect(t, serverCmd(ts, "TMUX_MCP_SCOPE=own"))
	if got := sessionNames(t, again); !slices.Equal(got, []string{"agent"}) {
		t.Fatalf("after a restart sees %v, want [agent]", got)
	}
	res, err := again.CallTool(context.Background(), &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"session_name": "main"}})
	if err != nil || !res.IsError || res.Meta["error_type"] != "TmuxObjectDoesNotExist" {
		t.Fatalf("capture of the person's session: %v %s", err, resultText(res))
	}
}
