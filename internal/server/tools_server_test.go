package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func TestGetServerInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "work")
	version := e.tmux.MustRun("display-message", "-p", "#{version}")
	real := realPath(e.tmux.SocketPath())

	var alive ServerInfo
	e.ok("get_server_info", map[string]any{}, &alive)
	if !alive.IsAlive || deref(alive.SessionCount) != 2 || deref(alive.Version) != version ||
		deref(alive.SocketName) != e.tmux.Socket.Name || deref(alive.SocketPath) != real {
		t.Errorf("alive server: %+v (want 2 sessions, version %s, name %s, path %s)", alive, version, e.tmux.Socket.Name, real)
	}

	var byPath ServerInfo
	e.ok("get_server_info", map[string]any{"socket_path": e.tmux.SocketPath()}, &byPath)
	if !byPath.IsAlive || byPath.SocketName != nil || deref(byPath.SocketPath) != real || deref(byPath.SessionCount) != 2 {
		t.Errorf("by socket_path: %+v", byPath)
	}

	dead := tmuxtest.NewWith(t) // no sessions: no server
	var d ServerInfo
	e.ok("get_server_info", map[string]any{"socket_name": dead.Socket.Name}, &d)
	if d.IsAlive || deref(d.SessionCount) != 0 || d.Version != nil || deref(d.SocketName) != dead.Socket.Name || d.SocketPath != nil {
		t.Errorf("dead server by name: %+v", d)
	}

	missing := filepath.Join(t.TempDir(), "nosuch")
	var m ServerInfo
	e.ok("get_server_info", map[string]any{"socket_path": missing}, &m)
	if m.IsAlive || deref(m.SessionCount) != 0 || deref(m.SocketPath) != missing || m.SocketName != nil {
		t.Errorf("missing socket path: %+v", m)
	}
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "work")
	e.tmux.MustRun("new-window", "-t", "=work:")
	e.tmux.MustRun("new-session", "-d", "-t", "main", "-s", "grp")
	e.tmux.MustRun("new-session", "-d", "-s", "a.b") // tmux stores it as a_b

	names := func(ss []SessionInfo) string {
		var n []string
		for _, s := range ss {
			n = append(n, deref(s.SessionName).(string))
		}
		return strings.Join(n, ",")
	}

	var all []SessionInfo
	e.list("list_sessions", map[string]any{}, &all)
	if got := names(all); got != "a_b,grp,main,work" {
		t.Fatalf("sessions = %s", got)
	}
	for _, s := range all {
		want := e.tmux.MustRun("display-message", "-p", "-t", s.SessionID, "#{session_windows} #{pane_id}")
		if got := fmt.Sprintf("%v %v", deref(s.WindowCount), deref(s.ActivePaneID)); got != want {
			t.Errorf("%s: window_count/active_pane_id = %s, want %s", s.SessionID, got, want)
		}
		if s.SessionAttached == nil || s.SessionCreated == nil {
			t.Errorf("%s: missing fields: %+v", s.SessionID, s)
		}
	}

	for _, tc := range []struct {
		filters any
		want    string
	}{
		{map[string]any{"session_name__startswith": "wo"}, "work"},
		{`{"session_name__in": "main, grp"}`, "grp,main"},
		{map[string]any{"session_name": "main"}, "main"},
		{map[string]any{"session_name__iregex": "^(MAIN|W)"}, "main,work"},
		{map[string]any{"session_windows": "2"}, "work"},
		{map[string]any{"session_group": "main"}, "grp,main"}, // a field outside the model, fetched for the filter
		{map[string]any{"no_such_field": "x"}, ""},
		{map[string]any{"session_name__nin": "main,grp"}, "a_b,work"},
		{nil, "a_b,grp,main,work"},
	} {
		var got []SessionInfo
		e.list("list_sessions", map[string]any{"filters": tc.filters}, &got)
		if names(got) != tc.want {
			t.Errorf("filters %v: got %s, want %s", tc.filters, names(got), tc.want)
		}
	}

	for _, bad := range []any{
		map[string]any{"session_name__like": "m"},
		map[string]any{"session_name__regex": "("},
		"not json",
		`["a"]`,
	} {
		msg, meta := e.fail("list_sessions", map[string]any{"filters": bad})
		if meta["expected"] != true {
			t.Errorf("filters %v: not an expected error: %s %v", bad, msg, meta)
		}
	}
	if msg, _ := e.fail("list_sessions", map[string]any{"filters": map[string]any{"x__like": "m"}}); !strings.Contains(msg, "icontains") {
		t.Errorf("bad operator message does not list the valid ones: %s", msg)
	}
}

func TestListSessionsNoServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	var got []SessionInfo
	e.list("list_sessions", map[string]any{}, &got)
	if got == nil || len(got) != 0 {
		t.Errorf("no server: %v, want an empty list", got)
	}
	e.list("list_sessions", map[string]any{"socket_path": filepath.Join(t.TempDir(), "nosuch")}, &got)
	if len(got) != 0 {
		t.Errorf("missing socket path: %v", got)
	}
}

// TestListSessionsNoServerHint: with no server on the socket, list_sessions
// answers the bare empty array as its first block and a second block naming
// the socket and the client-environment pitfall; with a server, one block.
func TestListSessionsNoServerHint(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.NewWith(t)
	e := newEnvOn(t, ts)
	texts := func(res *mcp.CallToolResult) []string {
		var out []string
		for _, c := range res.Content {
			out = append(out, c.(*mcp.TextContent).Text)
		}
		return out
	}
	got := texts(e.ok("list_sessions", map[string]any{}, nil))
	if len(got) != 2 || got[0] != "[]" {
		t.Fatalf("no server: blocks %q, want [] and a hint", got)
	}
	for _, want := range []string{ts.Socket.Name, "-e", "TMUX_MCP_SOCKET", "list_servers"} {
		if !strings.Contains(got[1], want) {
			t.Errorf("hint %q lacks %q", got[1], want)
		}
	}
	path := filepath.Join(t.TempDir(), "nosuch")
	if got := texts(e.ok("list_sessions", map[string]any{"socket_path": path}, nil)); len(got) != 2 || !strings.Contains(got[1], path) {
		t.Errorf("socket_path with no server: blocks %q, want a hint naming %s", got, path)
	}
	// list_windows and list_panes answer no server with an error, as the
	// reference does; its suggestion carries the same pitfall.
	for _, tool := range []string{"list_windows", "list_panes"} {
		if _, meta := e.fail(tool, map[string]any{}); !strings.Contains(fmt.Sprint(meta["suggestion"]), "-e") {
			t.Errorf("%s with no server: suggestion %q does not mention -e", tool, meta["suggestion"])
		}
	}
	ts.MustRun("new-session", "-d", "-s", "main")
	if got := texts(e.ok("list_sessions", map[string]any{}, nil)); len(got) != 1 {
		t.Errorf("with a server: blocks %q, want the array alone", got)
	}
}

// staleSocket leaves a unix socket file that nobody listens on, as a
// crashed server does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = l.Close()
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("stale socket not left behind: %v", err)
	}
}

func TestListServers(t *testing.T) {
	t.Parallel()
	a := tmuxtest.New(t)
	b := tmuxtest.NewWith(t, "one", "two")

	// A socket directory of our own, so the scan never reaches servers this
	// test did not start: server a is linked into it; next to it a stale
	// socket, a regular file and a directory.
	tmpdir := t.TempDir()
	sockDir := filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Geteuid()))
	if err := os.Mkdir(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a.SocketPath(), filepath.Join(sockDir, a.Socket.Name)); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(sockDir, "0stale")
	staleSocket(t, stale)
	if err := os.WriteFile(filepath.Join(sockDir, "afile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(sockDir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}

	e := newEnvOn(t, a, withConfig(func(c *config.Config) { c.TmuxTmpdir = tmpdir }))

	var got []ServerInfo
	e.list("list_servers", map[string]any{"extra_socket_paths": []string{
		filepath.Join(tmpdir, "nosuch"), // missing
		stale,                           // nobody listening
		filepath.Join(sockDir, "afile"), // not a socket
		b.SocketPath(),
		a.SocketPath(), // server a again, by its real path
		b.SocketPath(), // and b twice
		"",
	}}, &got)
	if len(got) != 2 {
		t.Fatalf("list_servers = %+v, want server a then b", got)
	}
	if g := got[0]; !g.IsAlive || deref(g.SocketName) != a.Socket.Name || deref(g.SocketPath) != realPath(a.SocketPath()) || deref(g.SessionCount) != 1 || g.Version == nil {
		t.Errorf("scanned server: %s", showServer(g))
	}
	if g := got[1]; !g.IsAlive || g.SocketName != nil || deref(g.SocketPath) != realPath(b.SocketPath()) || deref(g.SessionCount) != 2 {
		t.Errorf("extra server: %s", showServer(g))
	}

	// Without extra paths, and with the argument null.
	for _, args := range []map[string]any{{}, {"extra_socket_paths": nil}} {
		e.list("list_servers", args, &got)
		if len(got) != 1 || deref(got[0].SocketName) != a.Socket.Name {
			t.Errorf("list_servers(%v) = %+v", args, got)
		}
	}
}

// showServer spells out a ServerInfo's pointer fields for a failure message.
func showServer(g ServerInfo) string {
	return fmt.Sprintf("alive=%v socket_name=%q socket_path=%q sessions=%v version=%q", g.IsAlive,
		deref(g.SocketName), deref(g.SocketPath), deref(g.SessionCount), deref(g.Version))
}

func TestListServersEmptyDir(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.NewWith(t)
	e := newEnvOn(t, ts, withConfig(func(c *config.Config) { c.TmuxTmpdir = t.TempDir() }))
	var got []ServerInfo
	e.list("list_servers", map[string]any{"extra_socket_paths": []string{"/dev/null", filepath.Join(t.TempDir(), "x")}}, &got)
	if got == nil || len(got) != 0 {
		t.Errorf("no servers: %+v", got)
	}
}

func TestReadToolsOneRoundTrip(t *testing.T) {
	t.Parallel()
	e, n := countingEnv(t)
	e.tmux.MustRun("new-session", "-d", "-t", "main", "-s", "grp")
	e.tmux.MustRun("split-window", "-t", "=main:")
	wid := e.tmux.MustRun("display-message", "-p", "-t", "=main:", "#{window_id}")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_server_info", nil},
		{"list_sessions", map[string]any{"filters": map[string]any{"session_name": "main"}}},
		{"list_windows", nil},
		{"list_windows", map[string]any{"session_name": "grp"}},
		{"get_session_info", map[string]any{"session_name": "grp"}},
		{"get_window_info", nil},
		{"get_window_info", map[string]any{"window_id": wid}},
		{"get_window_info", map[string]any{"session_name": "grp", "window_index": "0"}},
		{"find_pane_by_position", map[string]any{"corner": "bottom-right", "window_id": wid}},
		{"find_pane_by_position", map[string]any{"corner": "top-left"}},
	} {
		n.Store(0)
		e.ok(tc.tool, tc.args, nil)
		if got := n.Load(); got != 1 {
			t.Errorf("%s(%v): %d tmux round trips, want 1", tc.tool, tc.args, got)
		}
	}
}

// Issue 21 item 10: the server tools' schemas and descriptions say what
// they do. Only list_servers reports host_error (a host it could not
// reach); get_server_info fails instead, so its result schema has no such
// field. list_servers scans a socket directory on this machine only: on a
// remote host it probes the configured socket (and extra_socket_paths).
func TestServerToolsTellTheTruth(t *testing.T) {
	e := newEnv(t)
	props := func(name string) map[string]any {
		t.Helper()
		out := e.srv.tool(name).outSchema()
		p, _ := out["properties"].(map[string]any)
		if items, ok := p["result"].(map[string]any); ok { // a wrapped list
			p, _ = items["items"].(map[string]any)["properties"].(map[string]any)
		}
		return p
	}
	if _, ok := props("get_server_info")["host_error"]; ok {
		t.Error("get_server_info's output schema lists host_error, which it never sets")
	}
	if _, ok := props("list_servers")["host_error"]; !ok {
		t.Error("list_servers' output schema lost host_error")
	}
	desc := e.srv.tool("list_servers").Description
	for _, want := range []string{"socket directory", "remote host", "configured socket", "extra_socket_paths"} {
		if !strings.Contains(desc, want) {
			t.Errorf("list_servers' description does not say %q: %s", want, desc)
		}
	}
}
