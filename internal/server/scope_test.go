package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/scope"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// scopeCanary is printed in every pane outside the scope: no answer may
// ever carry it.
const scopeCanary = "OUTSIDE-CANARY-7c1e"

// scopeWorld is a tmux server with sessions outside the caller's scope:
// the person's "main" and "person-edit" (two windows, a split), and "secrets"
// whose first window is also linked into "ci-shared" (a session a prefix
// scope may list, holding a window of an outside session). The caller's
// own sessions are made through the tools.
type scopeWorld struct {
	*env
	outside outsideObjects
}

// outsideObjects are the ids and names the caller must never see.
type outsideObjects struct {
	sessions, windows, panes, names []string
}

func (o outsideObjects) all() []string {
	return append(append(append(append([]string{}, o.sessions...), o.windows...), o.panes...), o.names...)
}

func withScope(s string) envOption { return func(c *configT) { c.Scope = s } }

func newScopeWorld(t *testing.T, opts ...envOption) *scopeWorld {
	t.Helper()
	e := newEnv(t, append([]envOption{withScope("own")}, opts...)...)
	ts := e.tmux
	ts.MustRun("new-session", "-d", "-s", "person-edit", "-x", "80", "-y", "24")
	ts.MustRun("new-window", "-t", "=person-edit:")
	ts.MustRun("split-window", "-t", "=person-edit:")
	ts.MustRun("new-session", "-d", "-s", "secrets", "-x", "80", "-y", "24")
	ts.MustRun("new-session", "-d", "-s", "ci-shared", "-x", "80", "-y", "24")
	ts.MustRun("link-window", "-s", "=secrets:0", "-t", "=ci-shared:5")
	// A person's session marked by another identity is outside own too.
	ts.MustRun("set-option", "-t", "=secrets:", scope.OwnerOption, "bob")
	ts.MustRun("set-buffer", "-b", "person-clip", scopeCanary)
	w := &scopeWorld{env: e}
	panes := ts.MustRun("list-panes", "-a", "-F", "#{pane_id} #{window_id} #{session_id} #{session_name}")
	seen := map[string]bool{}
	add := func(list *[]string, v string) {
		if !seen[v] {
			seen[v] = true
			*list = append(*list, v)
		}
	}
	for _, line := range strings.Split(panes, "\n") {
		f := strings.Fields(line)
		add(&w.outside.panes, f[0])
		add(&w.outside.windows, f[1])
		add(&w.outside.sessions, f[2])
		add(&w.outside.names, f[3])
		ts.MustRun("send-keys", "-t", f[0], "-l", "echo "+scopeCanary)
		ts.MustRun("send-keys", "-t", f[0], "Enter")
	}
	for _, p := range w.outside.panes {
		tmuxtest.WaitFor(t, 10e9, func() bool {
			out, _ := ts.Run("capture-pane", "-p", "-t", p)
			return strings.Count(out, scopeCanary) >= 2
		})
	}
	return w
}

// leaks reports the outside objects (and the canary) text holds, leaving
// out those the call named itself (an error quotes what it was given).
func (w *scopeWorld) leaks(text string, named ...string) []string {
	var out []string
	if strings.Contains(text, scopeCanary) {
		out = append(out, scopeCanary)
	}
	for _, o := range w.outside.all() {
		skip := false
		for _, n := range named {
			if n == o {
				skip = true
			}
		}
		if !skip && containsWord(text, o) {
			out = append(out, o)
		}
	}
	return out
}

// containsWord finds s in text not as part of a longer id or name (so
// "%1" is not found in "%12", nor "main" in "mainly").
func containsWord(text, s string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], s)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(s)
		before := j == 0 || !wordByte(text[j-1])
		after := end == len(text) || !wordByte(text[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func wordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b == '-'
}

// snapshot is the outside world as tmux itself reports it: it must be the
// same before and after the caller has tried everything.
func (w *scopeWorld) snapshot() string {
	var b strings.Builder
	panes, _ := w.tmux.Run("list-panes", "-a", "-F", "#{session_id} #{session_name} #{window_id} #{window_index} #{pane_id} #{pane_title} #{window_layout} #{window_active} #{pane_active} #{pane_pipe} #{pane_in_mode}")
	for _, line := range strings.Split(panes, "\n") {
		for _, s := range w.outside.sessions {
			if strings.HasPrefix(line, s+" ") {
				b.WriteString(line + "\n")
			}
		}
	}
	for _, args := range [][]string{
		{"show-options", "-g"}, {"show-options", "-s"}, {"show-options", "-g", "-w"},
		{"show-environment", "-g"},
	} {
		out, _ := w.tmux.Run(args...)
		b.WriteString(out + "\n")
	}
	// The person's buffers (the caller's own, tmux_mcp_*, are its to make).
	bufs, _ := w.tmux.Run("list-buffers", "-F", "#{buffer_name} #{buffer_sample}")
	for _, l := range strings.Split(bufs, "\n") {
		if !strings.HasPrefix(l, "tmux_mcp_") {
			b.WriteString(l + "\n")
		}
	}
	for _, s := range w.outside.sessions {
		out, _ := w.tmux.Run("show-options", "-t", s)
		b.WriteString(out + "\n")
		out, _ = w.tmux.Run("show-environment", "-t", s)
		b.WriteString(out + "\n")
	}
	for _, p := range w.outside.panes {
		out, _ := w.tmux.Run("capture-pane", "-p", "-t", p)
		b.WriteString(strings.TrimRight(out, "\n") + "\n")
	}
	return b.String()
}

// unchanged fails the test with the lines of the outside world that
// differ from before (a snapshot).
func (w *scopeWorld) unchanged(before string) {
	w.t.Helper()
	after := w.snapshot()
	if after == before {
		return
	}
	was := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		was[l] = true
	}
	is := map[string]bool{}
	for _, l := range strings.Split(after, "\n") {
		is[l] = true
	}
	var diff []string
	for _, l := range strings.Split(before, "\n") {
		if !is[l] {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range strings.Split(after, "\n") {
		if !was[l] {
			diff = append(diff, "+ "+l)
		}
	}
	w.t.Errorf("the outside world changed:\n%s", strings.Join(diff, "\n"))
}

// TestScopeWorkflow: under own, an agent's everyday workflow works as
// without a scope (create, split, run, capture, list, kill), its sessions
// carry its owner mark, and nothing outside shows.
func TestScopeWorkflow(t *testing.T) {
	w := newScopeWorld(t)
	e := w.env
	before := w.snapshot()

	var sess SessionInfo
	e.ok("create_session", map[string]any{"session_name": "work"}, &sess)
	if got := strings.TrimSpace(e.tmux.MustRun("show-options", "-t", "=work:", "-v", scope.OwnerOption)); got != StdioIdentity {
		t.Fatalf("owner mark %q, want %q", got, StdioIdentity)
	}
	// No target: the first session inside, not the server's first
	// ("ci-shared").
	var info SessionInfo
	e.ok("get_session_info", map[string]any{}, &info)
	if info.SessionID != sess.SessionID {
		t.Fatalf("get_session_info without a target: %s, want the first session inside, %s", info.SessionID, sess.SessionID)
	}
	var unnamed SessionInfo
	e.ok("create_session", map[string]any{}, &unnamed)
	if got := strings.TrimSpace(e.tmux.MustRun("show-options", "-t", unnamed.SessionID, "-v", scope.OwnerOption)); got != StdioIdentity {
		t.Fatalf("owner mark of an unnamed session %q, want %q", got, StdioIdentity)
	}
	var split PaneInfo
	e.ok("split_window", map[string]any{"session_name": "work"}, &split)
	waitShell(t, e.tmux, split.PaneID)
	var run RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": split.PaneID, "command": "echo scoped-$((6*7))", "timeout": 10}, &run)
	if run.ExitStatus == nil || *run.ExitStatus != 0 || !strings.Contains(strings.Join(run.Output, "\n"), "scoped-42") {
		t.Fatalf("run_command: %+v", run)
	}
	var capture string
	e.ok("capture_pane", map[string]any{"pane_id": split.PaneID}, &capture)
	if !strings.Contains(capture, "scoped-42") {
		t.Fatalf("capture_pane: %q", capture)
	}
	var sessions []SessionInfo
	e.list("list_sessions", map[string]any{}, &sessions)
	var names []string
	for _, s := range sessions {
		names = append(names, *s.SessionName)
	}
	if strings.Join(names, ",") != *unnamed.SessionName+",work" {
		t.Fatalf("list_sessions under own: %v", names)
	}
	var panes []PaneInfo
	e.list("list_panes", map[string]any{}, &panes)
	if len(panes) != 3 {
		t.Fatalf("list_panes under own: %d panes, want 3 (work's two, the unnamed session's one)", len(panes))
	}
	var server ServerInfo
	e.ok("get_server_info", map[string]any{}, &server)
	if server.SessionCount == nil || *server.SessionCount != 2 {
		t.Fatalf("get_server_info counts %v sessions, want the 2 inside", server.SessionCount)
	}
	var killed string
	e.ok("kill_session", map[string]any{"session_name": "work"}, &killed)
	e.ok("kill_session", map[string]any{"session_id": unnamed.SessionID}, &killed)
	e.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("after killing its sessions the caller lists %v", sessions)
	}
	if text, _ := e.fail("get_pane_info", map[string]any{}); !strings.Contains(text, "no session is in this caller's scope") {
		t.Fatalf("a call with no target and nothing inside: %q", text)
	}
	w.unchanged(before)
}

// scopedClient connects another MCP client to e's server as the
// authenticated client c (as the HTTP transport would mark it).
func scopedClient(t *testing.T, e *env, c Client) *mcp.ClientSession {
	t.Helper()
	ms := e.srv.MCP()
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(WithClient(ctx, c), method, req)
		}
	})
	return connectClient(t, ms, "test-"+c.Name, nil, nil, nil)
}

func scopeCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func sessionNamesOf(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	if res.IsError {
		t.Fatalf("list_sessions: %s", text(res))
	}
	var rows []SessionInfo
	if err := json.Unmarshal([]byte(text(res)), &rows); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, *r.SessionName)
	}
	return out
}

// TestScopeIdentities: two callers with own, and one listing a prefix,
// on one server: each sees only its own sessions; a client's own scope
// wins over the server's.
func TestScopeIdentities(t *testing.T) {
	w := newScopeWorld(t, withScope(""))
	alice := scopedClient(t, w.env, Client{Name: "alice", Scope: "own"})
	bob := scopedClient(t, w.env, Client{Name: "bob", Scope: "own"})
	ci := scopedClient(t, w.env, Client{Name: "ci", Scope: "sessions=ci-*"})
	for cs, name := range map[*mcp.ClientSession]string{alice: "alice-work", bob: "bob-work"} {
		if res := scopeCall(t, cs, "create_session", map[string]any{"session_name": name}); res.IsError {
			t.Fatal(text(res))
		}
	}
	if res := scopeCall(t, ci, "create_session", map[string]any{"session_name": "ci-build"}); res.IsError {
		t.Fatal(text(res))
	}
	if res := scopeCall(t, ci, "create_session", map[string]any{"session_name": "other"}); !res.IsError || res.Meta["error_type"] != "OutOfScope" {
		t.Fatalf("ci made a session outside its scope: %s", text(res))
	}
	for cs, want := range map[*mcp.ClientSession]string{alice: "alice-work", bob: "bob-work,secrets", ci: "ci-build,ci-shared"} {
		if got := strings.Join(sessionNamesOf(t, scopeCall(t, cs, "list_sessions", nil)), ","); got != want {
			t.Errorf("sees %q, want %q", got, want)
		}
	}
	// The world marks "secrets" as bob's: a mark set by hand is as good
	// as one set by create_session.
	// The unscoped stdio client sees everything.
	var all []SessionInfo
	w.list("list_sessions", map[string]any{}, &all)
	if len(all) != 7 {
		t.Errorf("unscoped: %d sessions, want 7", len(all))
	}
	// alice cannot reach bob's session by name or id.
	bobID := strings.TrimSpace(w.tmux.MustRun("display-message", "-p", "-t", "=bob-work:", "#{session_id}"))
	for _, args := range []map[string]any{{"session_name": "bob-work"}, {"session_id": bobID}} {
		res := scopeCall(t, alice, "get_session_info", args)
		if !res.IsError || res.Meta["error_type"] != "TmuxObjectDoesNotExist" {
			t.Errorf("alice get_session_info(%v): %s", args, text(res))
		}
	}
}

// TestScopeThroughHost: a scope holds on a remote host too (ssh to a
// loopback sshd): the host's own sessions are invisible and answer as
// missing ones, what the caller makes there carries its mark on that
// host's server, and the local server is confined alike.
func TestScopeThroughHost(t *testing.T) {
	he := newHostEnv(t, withScope("own"))
	e := he.env
	var made SessionInfo
	e.ok("create_session", on(map[string]any{"session_name": "agent"}), &made)
	if got := strings.TrimSpace(he.box.MustRun("show-options", "-t", "=agent:", "-v", scope.OwnerOption)); got != StdioIdentity {
		t.Fatalf("owner mark on the host %q", got)
	}
	var sessions []SessionInfo
	e.list("list_sessions", on(map[string]any{}), &sessions)
	if len(sessions) != 1 || *sessions[0].SessionName != "agent" {
		t.Fatalf("sessions on the host: %+v", sessions)
	}
	e.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("the local server's sessions show: %+v", sessions)
	}
	outside := map[string]string{"pane_id": "%0", "window_id": "@0", "session_id": "$0", "session_name": "main"}
	missing := map[string]string{"pane_id": "%9999", "window_id": "@9999", "session_id": "$9999", "session_name": "no-such-session"}
	n := 0
	for _, tool := range []string{"capture_pane", "send_keys", "get_window_info", "kill_session", "kill_window", "kill_pane", "rename_session"} {
		args := map[string]any{"keys": "echo hi", "new_name": "x"}
		props, _ := e.srv.tool(tool).inSchema()["properties"].(map[string]any)
		for key := range outside {
			if _, ok := props[key]; !ok {
				continue
			}
			a, b := on(maps.Clone(args)), on(maps.Clone(args))
			a[key], b[key] = outside[key], missing[key]
			got, want := e.call(tool, a), e.call(tool, b)
			if normal(answer(got), outside[key]) != normal(answer(want), missing[key]) {
				t.Errorf("%s %s=%s on the host: %s; a missing one: %s", tool, key, outside[key], answer(got), answer(want))
			}
			n++
		}
	}
	if _, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "tmux://hosts/box/panes/%250"}); err == nil {
		t.Errorf("the host's outside pane is readable as a resource")
	}
	if out := he.box.MustRun("list-sessions", "-F", "#{session_name}"); out != "agent\nmain" {
		t.Errorf("the host's sessions now: %q", out)
	}
	t.Logf("%d attempts on the host's outside objects, each answered as a missing object", n)
}

// TestScopeRulesCoverRegistry: the rule table names only real tools, and
// a tool without a rule is refused under a scope (fail closed) while it
// works without one.
func TestScopeRulesCoverRegistry(t *testing.T) {
	known := map[string]bool{}
	for _, tl := range append(allTools(), promptTools()...) {
		known[tl.Name] = true
	}
	for name := range scopeRules {
		if !known[name] {
			t.Errorf("scopeRules names %q, which is no tool", name)
		}
	}
	w := newScopeWorld(t, withScope(""))
	scoped := scopedClient(t, w.env, Client{Name: "alice", Scope: "own"})
	saved := scopeRules["get_server_info"]
	delete(scopeRules, "get_server_info")
	t.Cleanup(func() { scopeRules["get_server_info"] = saved })
	if res := scopeCall(t, scoped, "get_server_info", nil); !res.IsError || res.Meta["error_type"] != "OutOfScope" || !strings.Contains(text(res), "has no rule") {
		t.Errorf("a tool without a rule under a scope: %s", text(res))
	}
	w.ok("get_server_info", map[string]any{}, nil)
}

// TestScopeRefusals: what reaches the whole server is refused under a
// scope, with OutOfScope; the same call on what is inside works.
func TestScopeRefusals(t *testing.T) {
	w := newScopeWorld(t)
	var work SessionInfo
	w.ok("create_session", map[string]any{"session_name": "work"}, &work)
	pane := *work.ActivePaneID
	for _, c := range []struct {
		tool string
		args map[string]any
		ok   bool
	}{
		{"kill_server", map[string]any{}, false},
		{"list_servers", map[string]any{}, false},
		{"set_option", map[string]any{"option": "@x", "value": "1", "global_": true}, false},
		{"set_option", map[string]any{"option": "@x", "value": "1", "scope": "server"}, false},
		{"set_option", map[string]any{"option": "escape-time", "value": "0", "scope": "session", "target": "work"}, false},
		{"set_option", map[string]any{"option": "escape", "value": "0", "scope": "session", "target": "work"}, false},
		{"set_option", map[string]any{"option": "terminal-overrides[3]", "value": "x", "scope": "session", "target": "work"}, false},
		{"set_option", map[string]any{"option": scope.OwnerOption, "value": "bob", "scope": "session", "target": "work"}, false},
		{"show_option", map[string]any{"option": "escape-time"}, false},
		{"show_option", map[string]any{"option": "status", "global_": true}, false},
		{"show_hooks", map[string]any{"scope": "server"}, false},
		{"show_environment", map[string]any{}, false},
		{"set_environment", map[string]any{"name": "X", "value": "1"}, false},
		{"create_session", map[string]any{}, true}, // own: any session it makes is its own
		{"display_message", map[string]any{"pane_id": pane, "format_string": "#{S:#{session_name}}"}, false},
		{"display_message", map[string]any{"pane_id": pane, "format_string": "#{client_session}"}, false},
		{"set_option", map[string]any{"option": "@x", "value": "1", "scope": "session", "target": "work"}, true},
		{"set_option", map[string]any{"option": "mode-keys", "value": "vi", "scope": "window"}, true}, // pinned to the first session inside
		{"show_option", map[string]any{"option": "status", "scope": "session", "target": "work"}, true},
		{"show_option", map[string]any{"option": scope.OwnerOption, "scope": "session", "target": "work"}, true},
		{"show_environment", map[string]any{"session_name": "work"}, true},
		{"set_environment", map[string]any{"session_name": "work", "name": "X", "value": "1"}, true},
		{"display_message", map[string]any{"pane_id": pane, "format_string": "#{pane_id} ## #{session_name} #{window_index}"}, true},
		{"get_server_info", map[string]any{}, true},
		{"wait_for_channel", map[string]any{"channel": "c", "timeout": 0.1}, false}, // times out: an error, but not a refusal
	} {
		res := w.call(c.tool, c.args)
		refused := res.IsError && res.Meta["error_type"] == "OutOfScope"
		if c.ok && res.IsError || !c.ok && !refused && c.tool != "wait_for_channel" {
			t.Errorf("%s(%v): %s (error_type %v), want ok=%v", c.tool, c.args, text(res), res.Meta["error_type"], c.ok)
		}
		if c.tool == "wait_for_channel" && refused {
			t.Errorf("wait_for_channel refused under a scope: channels name no session")
		}
	}
	var msg string
	w.ok("display_message", map[string]any{"pane_id": pane, "format_string": "#{pane_id} ## #{session_name}"}, &msg)
	if msg != pane+" # work" {
		t.Errorf("display_message under a scope: %q", msg)
	}
}

// TestScopeCombinations: own plus listed sessions, listing by id, and a
// scope that cannot be read admits nothing.
func TestScopeCombinations(t *testing.T) {
	w := newScopeWorld(t, withScope(""))
	editID := strings.TrimSpace(w.tmux.MustRun("display-message", "-p", "-t", "=person-edit:", "#{session_id}"))
	for _, c := range []struct {
		scope string
		want  string
	}{
		{"own,sessions=main", "main,mine"},
		{"sessions=" + editID + ",ci-*", "ci-shared,person-edit"},
		{"sessions=*", "ci-shared,main,mine,person-edit,secrets"},
		{"unreadable!", ""},
	} {
		cs := scopedClient(t, w.env, Client{Name: "alice", Scope: c.scope})
		if c.scope == "own,sessions=main" {
			if res := scopeCall(t, cs, "create_session", map[string]any{"session_name": "mine"}); res.IsError {
				t.Fatal(text(res))
			}
		}
		if got := strings.Join(sessionNamesOf(t, scopeCall(t, cs, "list_sessions", nil)), ","); got != c.want {
			t.Errorf("scope %q sees %q, want %q", c.scope, got, c.want)
		}
	}
}

// BenchmarkScopeOverhead is get_pane_info on the control engine without a
// scope (the baseline), with sessions= (one more round trip: the view)
// and with own (two: the view and the owner marks), on a server of 20
// sessions of which the caller owns one.
func BenchmarkScopeOverhead(b *testing.B) {
	ts := tmuxtest.New(b)
	for i := range 19 {
		ts.MustRun("new-session", "-d", "-s", fmt.Sprintf("person-%02d", i))
	}
	ts.MustRun("set-option", "-t", "=main:", scope.OwnerOption, StdioIdentity)
	for _, sc := range []string{"", "sessions=main", "own"} {
		name := "scope=" + sc
		if sc == "" {
			name = "no-scope"
		}
		b.Run(name, func(b *testing.B) {
			e := benchEnv(b, ts, "control")
			e.srv.cfg.Scope = sc
			args := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": "%0"}}
			for b.Loop() {
				res, err := e.cs.CallTool(context.Background(), args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// TestScopeOwnerMarkShadowed: only a session's own owner mark counts. A
// value of the same option set globally, for the server, or on a window or
// pane (which a #{@option} format would find first) makes nothing the
// caller's.
func TestScopeOwnerMarkShadowed(t *testing.T) {
	w := newScopeWorld(t)
	ts := w.tmux
	ts.MustRun("set-option", "-g", scope.OwnerOption, StdioIdentity)
	ts.MustRun("set-option", "-s", scope.OwnerOption, StdioIdentity)
	ts.MustRun("set-option", "-g", "-w", scope.OwnerOption, StdioIdentity)
	ts.MustRun("set-option", "-w", "-t", "=main:0", scope.OwnerOption, StdioIdentity)
	ts.MustRun("set-option", "-p", "-t", "=person-edit:0.0", scope.OwnerOption, StdioIdentity)
	var sessions []SessionInfo
	w.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("sessions the caller never made count as its own: %+v", sessions)
	}
	ts.MustRun("set-option", "-t", "=main:", scope.OwnerOption, StdioIdentity)
	w.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) != 1 || *sessions[0].SessionName != "main" {
		t.Fatalf("a session marked by hand: %+v", sessions)
	}
}

// TestScopeConfirm: confirmation (confirm.go) under a scope. A refused
// tool is refused before the person is asked; a call on an outside object
// is described in the question exactly as one on a missing object (the
// person is asked the same question, and it names nothing outside), alone
// or as a batch row.
func TestScopeConfirm(t *testing.T) {
	ts, victim := victimWorld(t) // "main" and "victim": the person's
	a := newAsker("decline")
	e, _ := confirmEnv(t, ts, protoLegacy, &mcp.ClientOptions{ElicitationHandler: a.handle}, func(c *configT) { c.Scope = "own" })
	e.ok("create_session", map[string]any{"session_name": "work"}, nil)
	if res := e.call("kill_server", map[string]any{}); errType(res) != "OutOfScope" || len(a.questions()) != 0 {
		t.Fatalf("kill_server under a scope: %s, questions %q", text(res), a.questions())
	}
	ask := func(tool string, args map[string]any) string {
		t.Helper()
		n := len(a.questions())
		e.call(tool, args)
		qs := a.questions()
		if len(qs) != n+1 {
			t.Fatalf("%s(%v): %d questions, want one", tool, args, len(qs)-n)
		}
		return qs[n]
	}
	victimPane := strings.TrimSpace(ts.MustRun("display-message", "-p", "-t", "=victim:", "#{pane_id}"))
	for _, c := range []struct {
		tool             string
		key              string
		outside, missing string
	}{
		{"kill_session", "session_name", "victim", "no-such-session"},
		{"kill_session", "session_id", victim, "$9999"},
		{"kill_pane", "pane_id", victimPane, "%9999"},
	} {
		got := ask(c.tool, map[string]any{c.key: c.outside})
		want := ask(c.tool, map[string]any{c.key: c.missing})
		if strings.ReplaceAll(got, c.outside, "<X>") != strings.ReplaceAll(want, c.missing, "<X>") {
			t.Errorf("%s %s=%s is asked about unlike a missing one:\n%s\n---\n%s", c.tool, c.key, c.outside, got, want)
		}
		for _, s := range []string{"editor", "build", "cat", "sleep"} {
			if strings.Contains(got, s) {
				t.Errorf("the question about %s names %q of the outside session:\n%s", c.outside, s, got)
			}
		}
	}
	batch := func(pane string) map[string]any {
		return map[string]any{"operations": []any{map[string]any{"tool": "kill_pane", "arguments": map[string]any{"pane_id": pane}}}}
	}
	got, want := ask("call_destructive_tools_batch", batch(victimPane)), ask("call_destructive_tools_batch", batch("%9999"))
	if strings.ReplaceAll(got, victimPane, "<X>") != strings.ReplaceAll(want, "%9999", "<X>") {
		t.Errorf("a batch row on an outside pane is asked about unlike a missing one:\n%s\n---\n%s", got, want)
	}
	if !hasSession(ts, "victim") {
		t.Fatal("the outside session is gone")
	}
}

// TestScopeCursorInMixedSession: a capture_since cursor names its pane, so
// a call with only the cursor is not refused when the first session inside
// holds an outside window (there is no session to fall back to).
func TestScopeCursorInMixedSession(t *testing.T) {
	w := newScopeWorld(t)
	var work SessionInfo
	w.ok("create_session", map[string]any{"session_name": "aaa-work"}, &work)
	w.tmux.MustRun("link-window", "-d", "-s", "=main:0", "-t", "=aaa-work:7")
	if res := w.call("capture_pane", map[string]any{}); errType(res) != "OutOfScope" {
		t.Fatalf("a call leaving the window to tmux in a session holding an outside one: %s", text(res))
	}
	var since CaptureSinceResult
	w.ok("capture_since", map[string]any{"pane_id": *work.ActivePaneID}, &since)
	w.ok("capture_since", map[string]any{"cursor": since.Cursor}, &since)
	if since.PaneID != *work.ActivePaneID {
		t.Errorf("capture_since with a cursor read %s, want %s", since.PaneID, *work.ActivePaneID)
	}
}
