package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Remote hosts through the MCP layer (issue 12): a loopback sshd (package
// sshtest) stands for host "box", whose tmux server is an isolated test
// server named by the host's configured socket; host "gone" points at a
// port nothing listens on. The local machine has its own test server, so
// "%0" exists on both sides and must never be confused.

// hostEnv is an MCP session on a server with hosts "box" and "gone".
type hostEnv struct {
	*env                  // e.tmux is the local tmux server
	box  *tmuxtest.Server // the tmux server on host "box"
	sshd *sshtest.Server
}

func newHostEnv(t *testing.T, opts ...envOption) *hostEnv {
	t.Helper()
	var extra []string
	// The remote side resolves the host's socket name in TMUX_TMPDIR, which
	// does not cross ssh: the test sshd sets it for its sessions.
	if d := os.Getenv("TMUX_TMPDIR"); d != "" {
		extra = append(extra, "SetEnv TMUX_TMPDIR="+d)
	}
	s := sshtest.Start(t, extra...)
	box := tmuxtest.New(t)
	box.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	local := tmuxtest.New(t)
	local.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	set, err := remote.NewSet([]remote.Spec{
		{Name: "box", Destination: sshtest.Alias, TmuxBin: box.Bin, Socket: box.Socket.Name},
		{Name: "gone", Destination: fmt.Sprintf("ssh://%s@127.0.0.1:%d", s.User, closedTCPPort(t))},
	}, remote.Options{SSHCommand: s.SSHCommand(), ConnectTimeout: 3 * time.Second, AliveInterval: time.Second,
		AliveCount: 2, StartTimeout: 5 * time.Second, Env: tmuxtest.CleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{SocketName: local.Socket.Name, TmuxBin: local.Bin, Safety: config.Destructive,
		WaitMax: config.DefaultWaitMax, SuppressHistory: true}
	for _, o := range opts {
		o(&cfg)
	}
	e := newEnvHosts(t, local, cfg, testRunner(t, local), set)
	// Registered last, so it runs first: Close must leave no ssh process and
	// no client on the remote tmux server.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.srv.Close(ctx)
		tmuxtest.WaitFor(t, 10*time.Second, func() bool {
			clients, _ := box.Run("list-clients")
			return clients == "" && len(sshChildProcs()) == 0
		})
	})
	return &hostEnv{env: e, box: box, sshd: s}
}

// with is the env reporting to t (a subtest's).
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// on adds host "box" to a tool's arguments.
func on(args map[string]any) map[string]any {
	args[HostArgName] = "box"
	return args
}

func closedTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// sshChildProcs lists this process's children named ssh (/proc).
func sshChildProcs() []string {
	me := fmt.Sprint(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) > 1 && f[1] == me && s[open+1:end] == "ssh" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestRemoteHostTools runs a representative subset of the read, acting and
// waiting tools on host "box", each checked against the local server.
func TestRemoteHostTools(t *testing.T) {
	// The server believes it runs in pane %0 of the socket that is, on this
	// machine, box's socket: only the host tells them apart, so a remote
	// pane must never be taken for the caller's.
	he := newHostEnv(t)
	e := he.env
	boxPath := he.box.SocketPath()
	e.srv.cfg.Caller = config.Caller{PaneID: "%0", SocketPath: boxPath}
	waitShell(t, he.box, "%0")
	waitShell(t, e.tmux, "%0")

	t.Run("reads name the host", func(t *testing.T) {
		e := e.with(t)
		if ins := e.cs.InitializeResult().Instructions; !strings.Contains(ins, "Remote hosts, named by the host argument (omit it for this machine; ids are per host): box, gone.") {
			t.Errorf("instructions do not name the hosts: %q", ins)
		}
		var panes []PaneInfo
		e.list("list_panes", on(map[string]any{"session_name": "main"}), &panes)
		if len(panes) != 1 || panes[0].PaneID != "%0" || panes[0].Host == nil || *panes[0].Host != "box" {
			t.Fatalf("remote panes %+v", panes)
		}
		if panes[0].IsCaller == nil || *panes[0].IsCaller {
			t.Fatalf("a remote pane is_caller %v, want false", panes[0].IsCaller)
		}
		wantTTY := he.box.MustRun("display-message", "-p", "-t", "%0", "#{pane_tty}")
		if panes[0].PaneTTY == nil || *panes[0].PaneTTY != wantTTY {
			t.Fatalf("remote %%0 tty %v, box's is %s", panes[0].PaneTTY, wantTTY)
		}
		res := e.call("list_panes", map[string]any{"session_name": "main"})
		if strings.Contains(text(res), `"host"`) {
			t.Fatalf("a local result names a host: %s", text(res))
		}
		var sessions []SessionInfo
		e.list("list_sessions", on(map[string]any{}), &sessions)
		if len(sessions) != 1 || sessions[0].Host == nil || *sessions[0].Host != "box" {
			t.Fatalf("remote sessions %+v", sessions)
		}
		if sessions[0].SessionAttached == nil || *sessions[0].SessionAttached != "0" {
			t.Fatalf("session_attached %v: our own remote clients are counted", sessions[0].SessionAttached)
		}
		var p PaneInfo
		e.ok("get_pane_info", on(map[string]any{"pane_id": "%0"}), &p)
		if p.Host == nil || *p.Host != "box" || p.PaneTTY == nil || *p.PaneTTY != wantTTY {
			t.Fatalf("get_pane_info %+v", p)
		}
	})

	t.Run("send_keys, wait_for_text and capture_pane reach the host's %0 only", func(t *testing.T) {
		e := e.with(t)
		// The wait watches output that comes after it starts: type once
		// its watcher on box is attached.
		eng, err := e.srv.hosts.Get("box")
		if err != nil {
			t.Fatal(err)
		}
		waited := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_text",
				Arguments: on(map[string]any{"pane_id": "%0", "patterns": []string{"^remote-42"}, "regex": true, "timeout": 30})})
			waited <- res
		}()
		tmuxWait(t, func() bool { return eng.Watchers.Subscriptions() > 0 })
		e.ok("send_keys", on(map[string]any{"pane_id": "%0", "keys": "echo remote-$((6*7))"}), nil)
		res := <-waited
		var w struct {
			Found bool `json:"found"`
		}
		if res == nil || res.IsError {
			t.Fatalf("wait_for_text: %v", res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &w); err != nil || !w.Found {
			t.Fatalf("wait_for_text did not see the remote output: %s", raw)
		}
		var out string
		e.ok("capture_pane", on(map[string]any{"pane_id": "%0"}), &out)
		if !strings.Contains(out, "remote-42") {
			t.Fatalf("remote capture %q", out)
		}
		e.ok("capture_pane", map[string]any{"pane_id": "%0"}, &out)
		if strings.Contains(out, "remote-") {
			t.Fatalf("the keys reached the local %%0: %q", out)
		}
	})

	t.Run("run_command and wait_for_run on the host", func(t *testing.T) {
		e := e.with(t)
		var r RunCommandResult
		e.ok("run_command", on(map[string]any{"pane_id": "%0", "command": "echo run-$((2+3))", "timeout": 15}), &r)
		if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "run-5" {
			t.Fatalf("run_command %+v", r)
		}
		e.ok("run_command", on(map[string]any{"pane_id": "%0", "command": "sleep 1.5; echo late-$((1+1))", "timeout": 0.3}), &r)
		if !r.TimedOut || r.RunID == nil {
			t.Fatalf("expected a timed-out run: %+v", r)
		}
		// The run remembers its host: wait_for_run needs no host argument.
		e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 15}, &r)
		if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "late-2" {
			t.Fatalf("wait_for_run %+v", r)
		}
	})

	t.Run("wait_for_channel and signal_channel on the host", func(t *testing.T) {
		e := e.with(t)
		go func() {
			time.Sleep(300 * time.Millisecond)
			_, _ = e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "signal_channel", Arguments: on(map[string]any{"channel": "box-ch"})})
		}()
		start := time.Now()
		var out string
		e.ok("wait_for_channel", on(map[string]any{"channel": "box-ch", "timeout": 10}), &out)
		if el := time.Since(start); el < 250*time.Millisecond || el > 8*time.Second {
			t.Fatalf("wait_for_channel returned after %s: %q", el, out)
		}
		// The local server has no such signal: a local wait times out.
		if msg, _ := e.fail("wait_for_channel", map[string]any{"channel": "box-ch", "timeout": 0.3}); !strings.Contains(strings.ToLower(msg), "timeout") && !strings.Contains(msg, "timed out") {
			t.Fatalf("local wait: %q", msg)
		}
	})

	t.Run("capture_since cursors are per host", func(t *testing.T) {
		e := e.with(t)
		var c CaptureSinceResult
		e.ok("capture_since", on(map[string]any{"pane_id": "%0"}), &c)
		msg, _ := e.fail("capture_since", map[string]any{"pane_id": "%0", "cursor": c.Cursor})
		if !strings.Contains(msg, "another tmux server") {
			t.Fatalf("a remote cursor on the local %%0: %q", msg)
		}
		e.ok("send_keys", on(map[string]any{"pane_id": "%0", "keys": "echo since-$((3*3))"}), nil)
		tmuxtest.WaitFor(t, 10*time.Second, func() bool {
			out, _ := he.box.Run("capture-pane", "-p", "-t", "%0")
			return strings.Contains(out, "since-9\n")
		})
		var next CaptureSinceResult
		e.ok("capture_since", on(map[string]any{"pane_id": "%0", "cursor": c.Cursor}), &next)
		if !strings.Contains(strings.Join(next.Lines, "\n"), "since-9") {
			t.Fatalf("capture_since on the host: %+v", next)
		}
	})

	t.Run("buffers are per host", func(t *testing.T) {
		e := e.with(t)
		var b BufferRef
		e.ok("load_buffer", on(map[string]any{"content": "on-box", "logical_name": "x"}), &b)
		if !strings.Contains(he.box.MustRun("list-buffers", "-F", "#{buffer_name}"), b.BufferName) {
			t.Fatal("the buffer is not on box")
		}
		// Content too long for one argument arrives whole: in pieces, not
		// through a file of this machine.
		big := strings.Repeat("héllo ✓ 日本 0123456789\n", 3000)
		var bb BufferRef
		e.ok("load_buffer", on(map[string]any{"content": big, "logical_name": "big"}), &bb)
		if got := he.box.MustRun("show-buffer", "-b", bb.BufferName); got != strings.TrimRight(big, "\n") {
			t.Fatalf("big buffer on box: %d bytes, want %d", len(got), len(big))
		}
		var shown BufferContent
		e.ok("show_buffer", on(map[string]any{"buffer_name": bb.BufferName, "max_lines": nil}), &shown)
		if shown.Content != big {
			t.Fatalf("show_buffer on box: %d bytes, want %d", len(shown.Content), len(big))
		}
		e.ok("delete_buffer", on(map[string]any{"buffer_name": bb.BufferName}), nil)
		// A NUL byte, which no command line carries, is streamed on
		// load-buffer's stdin and arrives exact, CR and framing-like lines too.
		bin := "%begin 1 2 1\n\x00\r\n%end 1 2 1\nno newline"
		e.ok("load_buffer", on(map[string]any{"content": bin, "logical_name": "bin"}), &bb)
		e.ok("show_buffer", on(map[string]any{"buffer_name": bb.BufferName, "max_lines": nil}), &shown)
		if shown.Content != bin {
			t.Fatalf("show_buffer on box: %q, want %q", shown.Content, bin)
		}
		e.ok("delete_buffer", on(map[string]any{"buffer_name": bb.BufferName}), nil)
		if _, meta := e.fail("show_buffer", map[string]any{"buffer_name": b.BufferName}); meta["error_type"] != "ObjectDoesNotExist" {
			t.Fatalf("a remote buffer shown from the local server: %v", meta)
		}
		if _, meta := e.fail("delete_buffer", map[string]any{"buffer_name": b.BufferName}); meta["error_type"] != "ObjectDoesNotExist" {
			t.Fatalf("a remote buffer deleted on the local server: %v", meta)
		}
		e.ok("delete_buffer", on(map[string]any{"buffer_name": b.BufferName}), nil)
		if strings.Contains(he.box.MustRun("list-buffers", "-F", "#{buffer_name}"), b.BufferName) {
			t.Fatal("the buffer is still on box")
		}
	})

	t.Run("unknown host and remote socket checks", func(t *testing.T) {
		e := e.with(t)
		msg, meta := e.fail("get_pane_info", map[string]any{"pane_id": "%0", "host": "nope"})
		if !strings.Contains(msg, "configured: box, gone") || meta["error_type"] != "ValidationError" {
			t.Fatalf("unknown host: %q %v", msg, meta)
		}
		msg, meta = e.fail("get_pane_info", on(map[string]any{"pane_id": "%0", "socket_path": "relative/sock"}))
		if !strings.Contains(msg, "absolute") || meta["error_type"] != "ValidationError" {
			t.Fatalf("relative remote path: %q %v", msg, meta)
		}
		// A path that does not exist here is the remote host's business: it
		// is not stat'ed locally, and the remote tmux finds no server there.
		dir := filepath.Join(t.TempDir(), "only-remote")
		_, meta = e.fail("get_pane_info", on(map[string]any{"pane_id": "%0", "socket_path": dir + "/sock"}))
		if meta["error_type"] != "TmuxServerNotRunning" {
			t.Fatalf("remote path checked locally: %v", meta)
		}
		// A server started at a remote socket path never replaces a file
		// there, nor the file at the path plus ".lock" (checked on the host).
		own := shortDir(t)
		canary, lock := filepath.Join(own, "canary"), filepath.Join(own, "Cargo.lock")
		for _, f := range []string{canary, lock} {
			if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []string{canary, filepath.Join(own, "Cargo")} {
			msg, meta = e.fail("create_session", on(map[string]any{"session_name": "x", "socket_path": p}))
			if meta["error_type"] != "ValidationError" || !strings.HasPrefix(msg, "socket_path: ") || !strings.Contains(msg, "on host box") {
				t.Fatalf("create_session at %s on the host: %q %v", p, msg, meta)
			}
		}
		for _, f := range []string{canary, lock} {
			if b, err := os.ReadFile(f); err != nil || string(b) != "keep" {
				t.Fatalf("%s changed: %q %v", f, b, err)
			}
		}
		// Paths of the host are not resolved here: ~ and relative paths
		// would name this machine's directories.
		for _, dir := range []string{"~", "rel/dir"} {
			if msg, _ := e.fail("create_window", on(map[string]any{"session_name": "main", "start_directory": dir})); !strings.Contains(msg, "must be absolute") {
				t.Fatalf("start_directory %q on the host: %q", dir, msg)
			}
		}
		if msg, _ := e.fail("pipe_pane", on(map[string]any{"pane_id": "%0", "output_path": "out.log"})); !strings.Contains(msg, "must be absolute") {
			t.Fatalf("relative output_path on the host: %q", msg)
		}
		msg, meta = e.fail("get_pane_info", on(map[string]any{"pane_id": "%0", "socket_name": "a b"}))
		if meta["error_type"] != "ValidationError" {
			t.Fatalf("bad remote socket name: %q %v", msg, meta)
		}
	})

	t.Run("list_servers: every host, an unreachable one with its reason", func(t *testing.T) {
		e := e.with(t)
		start := time.Now()
		var servers []ServerRow
		e.list("list_servers", map[string]any{}, &servers)
		var local, box, gone int
		for _, s := range servers {
			switch {
			case s.Host == nil:
				if s.SocketName != nil && *s.SocketName == e.tmux.Socket.Name {
					local++
				}
			case *s.Host == "box":
				if !s.IsAlive || s.SocketName == nil || *s.SocketName != he.box.Socket.Name || s.HostError != nil {
					t.Errorf("box row %+v", s)
				}
				box++
			case *s.Host == "gone":
				if s.IsAlive || s.HostError == nil || !strings.Contains(*s.HostError, "gone") {
					t.Errorf("gone row %+v", s)
				}
				gone++
			}
		}
		if local != 1 || box != 1 || gone != 1 {
			t.Fatalf("local %d, box %d, gone %d rows: %+v", local, box, gone, servers)
		}
		if el := time.Since(start); el > 15*time.Second {
			t.Fatalf("list_servers took %s", el)
		}
		e.list("list_servers", on(map[string]any{}), &servers)
		if len(servers) != 1 || servers[0].Host == nil || *servers[0].Host != "box" {
			t.Fatalf("list_servers(host=box) %+v", servers)
		}
	})

	t.Run("a batch mixes hosts", func(t *testing.T) {
		e := e.with(t)
		var res ToolCallBatchResult
		e.ok("call_readonly_tools_batch", map[string]any{"operations": []any{
			map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0"}},
			map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0", "host": "box"}},
		}}, &res)
		hosts := []string{}
		for _, row := range res.Results {
			var p PaneInfo
			raw, _ := json.Marshal(row.StructuredContent)
			_ = json.Unmarshal(raw, &p)
			hosts = append(hosts, str(p.Host))
		}
		if res.Succeeded != 2 || strings.Join(hosts, ",") != ",box" {
			t.Fatalf("rows %+v", res)
		}
		// The batch's host is every operation's that names none.
		e.ok("call_readonly_tools_batch", map[string]any{"host": "box", "operations": []any{
			map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0"}},
		}}, &res)
		raw, _ := json.Marshal(res.Results[0].StructuredContent)
		if !strings.Contains(string(raw), `"host":"box"`) {
			t.Fatalf("batch host: %s", raw)
		}
	})

	t.Run("resources and completion by host", func(t *testing.T) {
		e := e.with(t)
		ctx := context.Background()
		n := 0
		for _, err := range e.cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(resourceTemplates)+len(hostResourceTemplates)+len(recordingTemplates) {
			t.Errorf("%d templates", n)
		}
		res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://hosts/box/panes/%250"})
		if err != nil || !strings.Contains(res.Contents[0].Text, `"host": "box"`) {
			t.Fatalf("host pane resource: %v %v", res, err)
		}
		res, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://hosts/box/panes/%0/content"})
		if err != nil || !strings.Contains(res.Contents[0].Text, "remote-42") {
			t.Fatalf("host content resource: %v %v", res, err)
		}
		if _, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://hosts/nope/panes/%250"}); err == nil || !strings.Contains(err.Error(), "unknown host") {
			t.Fatalf("unknown host resource: %v", err)
		}
		complete := func(arg, val string, context map[string]string) []string {
			p := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tmux://hosts/{host}/panes/{pane_id}{?socket_name}"},
				Argument: mcp.CompleteParamsArgument{Name: arg, Value: val}}
			if context != nil {
				p.Context = &mcp.CompleteContext{Arguments: context}
			}
			r, err := e.cs.Complete(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return r.Completion.Values
		}
		if got := complete("host", "", nil); strings.Join(got, ",") != "box,gone" {
			t.Errorf("host names %v", got)
		}
		he.box.MustRun("split-window", "-d", "-t", "%0", "bash --norc --noprofile")
		if got := complete("pane_id", "%", map[string]string{"host": "box"}); strings.Join(got, ",") != "%0,%1" {
			t.Errorf("box's pane ids %v", got)
		}
		if got := complete("pane_id", "%", nil); strings.Join(got, ",") != "%0" {
			t.Errorf("local pane ids %v", got)
		}
	})

	t.Run("a subscription follows the host's pane", func(t *testing.T) {
		e := e.with(t)
		cs, seen := notifyClient(t, e)
		uri := "tmux://hosts/box/panes/%250/content"
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		eng, err := e.srv.hosts.Get("box")
		if err != nil {
			t.Fatal(err)
		}
		tmuxWait(t, func() bool { return eng.Watchers.Subscriptions() > 0 })
		local := e.srv.watch.Subscriptions()
		he.box.MustRun("send-keys", "-t", "%0", "echo sub-changed", "Enter")
		tmuxWait(t, func() bool { u, _ := seen(); return len(u) > 0 })
		if u, _ := seen(); u[0] != uri {
			t.Fatalf("notified %v", u)
		}
		if local != 0 {
			t.Fatalf("the host's subscription attached %d local watchers", local)
		}
	})

	t.Run("self-kill guards are local", func(t *testing.T) {
		e := e.with(t)
		// The caller's pane is %0 on box's socket path, but on this machine:
		// box's %1 goes, and so does the window holding box's %0.
		e.ok("kill_pane", on(map[string]any{"pane_id": "%1"}), nil)
		e.ok("create_window", on(map[string]any{"session_name": "main", "window_name": "w2"}), nil)
		win := he.box.MustRun("display-message", "-p", "-t", "%0", "#{window_id}")
		e.ok("kill_window", on(map[string]any{"window_id": win}), nil)
		if out := he.box.MustRun("list-panes", "-a", "-F", "#{pane_id}"); strings.Contains(out, "%0") {
			t.Fatalf("box's %%0 survived: %s", out)
		}
	})

	t.Run("a start_directory is checked on the host", func(t *testing.T) {
		e := e.with(t)
		dir := t.TempDir()
		var s SessionInfo
		e.ok("create_session", on(map[string]any{"session_name": "sd", "start_directory": dir}), &s)
		if got := he.box.MustRun("display-message", "-p", "-t", *s.ActivePaneID, "#{pane_start_path}"); got != dir {
			t.Fatalf("the pane started in %q, want %q", got, dir)
		}
		for _, d := range []string{filepath.Join(dir, "nope"), "/etc/hostname"} {
			msg, meta := e.fail("create_window", on(map[string]any{"session_name": "sd", "start_directory": d}))
			if !strings.Contains(msg, "start_directory "+d+" is not an existing directory on host box") || meta["error_type"] != "ExpectedToolError" {
				t.Errorf("%s: %q %v", d, msg, meta)
			}
		}
		if n := he.box.MustRun("display-message", "-p", "-t", "sd:", "#{session_windows}"); n != "1" {
			t.Fatalf("session sd has %s windows after the refusals", n)
		}
		// A host that cannot be reached is not a missing directory.
		msg, meta := e.fail("split_window", map[string]any{HostArgName: "gone", "start_directory": dir})
		if strings.Contains(msg, "not an existing directory") || meta["error_type"] != "HostUnreachable" {
			t.Errorf("unreachable host: %q %v", msg, meta)
		}
	})
}

// waitShell waits until a pane's shell prompt is drawn.
func waitShell(t *testing.T, ts *tmuxtest.Server, pane string) {
	t.Helper()
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := ts.Run("capture-pane", "-p", "-t", pane)
		return strings.Contains(out, "$") || strings.Contains(out, "#")
	})
}

// TestRemoteHostileInput: the hostile-input table of the acting tools, once
// against the remote host: every value is typed or stored exactly, or
// refused, and nothing runs on either side (the marker would be on this
// machine, which is both sides here).
func TestRemoteHostileInput(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	dir := t.TempDir()
	marker := filepath.Join(dir, "PWNED")
	big := strings.Repeat("héllo wörld ✓ 0123456789;#{x}\\; ", 1<<20/36)
	cases := append(hostileInputs(marker), hostileCase{"1 MB", big})
	for i, c := range cases {
		file := filepath.Join(dir, fmt.Sprintf("typed-%d", i))
		id := he.box.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "sh -c 'stty raw -echo && exec cat > "+file+"'")
		tmuxtest.WaitFor(t, 5*time.Second, func() bool {
			out, _ := he.box.Run("display-message", "-p", "-t", id, "#{pane_current_command}")
			_, err := os.Stat(file)
			return err == nil && out == "cat"
		})
		e.ok("send_keys", on(map[string]any{"pane_id": id, "keys": c.in, "literal": true, "enter": false}), nil)
		want := viaJSON(c.in)
		var got []byte
		tmuxtest.WaitFor(t, 30*time.Second, func() bool {
			got, _ = os.ReadFile(file)
			return len(got) >= len(want)
		})
		if string(got) != want {
			t.Fatalf("%s: typed %d bytes %q..., want %d bytes %q...", c.name, len(got), trunc(string(got)), len(want), trunc(want))
		}
		he.box.MustRun("kill-pane", "-t", id)
		if c.name == "1 MB" {
			continue
		}
		args := on(map[string]any{"pane_id": "%0", "title": c.in})
		if strings.Contains(c.in, "\n") {
			if msg, _ := e.fail("set_pane_title", args); !strings.Contains(msg, "control characters") {
				t.Fatalf("%s: %q", c.name, msg)
			}
			continue
		}
		var p PaneInfo
		e.ok("set_pane_title", args, &p)
		if p.PaneTitle == nil || *p.PaneTitle != viaJSON(c.in) {
			t.Fatalf("%s: title %v, want %q", c.name, p.PaneTitle, viaJSON(c.in))
		}
	}
	if msg, _ := e.fail("send_keys", on(map[string]any{"pane_id": "%0", "keys": "a\x00b"})); !strings.Contains(msg, "NUL") {
		t.Fatalf("NUL: %q", msg)
	}
	// Remote socket names and paths never carry shell syntax.
	for _, bad := range []string{"x;touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`"} {
		if _, meta := e.fail("list_panes", on(map[string]any{"socket_name": bad})); meta["error_type"] != "ValidationError" {
			t.Fatalf("socket_name %q: %v", bad, meta)
		}
		if _, meta := e.fail("list_panes", on(map[string]any{"socket_path": "/tmp/" + bad})); meta["error_type"] != "ValidationError" {
			t.Fatalf("socket_path %q: %v", bad, meta)
		}
	}
	time.Sleep(300 * time.Millisecond) // a format job would run in the background
	assertNoMarker(t, marker)
}

// TestRemotePasteTextStreamed: paste_text of text too long to be set in
// pieces, on a host: the text is streamed into a private buffer, pasted
// whole, and the buffer is gone afterwards, also when the paste fails.
func TestRemotePasteTextStreamed(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	out := filepath.Join(t.TempDir(), "pasted")
	he.box.MustRun("respawn-pane", "-k", "-t", "%0", "cat > "+out)
	text := strings.Repeat("pasted line ✓ 0123456789 $(id) ;\n", maxPiecedContent/30) // 300 KB
	e.ok("paste_text", on(map[string]any{"pane_id": "%0", "text": text}), nil)
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return string(b) == text
	})
	if list := he.box.MustRun("list-buffers", "-F", "#{buffer_name}"); strings.Contains(list, "tmux_mcp_") {
		t.Fatalf("paste_text left a buffer on box: %q", list)
	}
	if _, meta := e.fail("paste_text", on(map[string]any{"pane_id": "%99", "text": text})); meta["error_type"] != "PaneNotFound" {
		t.Fatalf("paste_text to a missing pane: %v", meta)
	}
	if list := he.box.MustRun("list-buffers", "-F", "#{buffer_name}"); strings.Contains(list, "tmux_mcp_") {
		t.Fatalf("a failed paste_text left a buffer on box: %q", list)
	}
}

// TestLoadCommandRemote: content for a remote host never goes through a
// local file: up to maxPiecedContent, set-buffer pieces of at most
// maxArgContent, split between characters, that append up to the content;
// larger content, or any with a NUL byte, is streamed instead.
func TestLoadCommandRemote(t *testing.T) {
	content := strings.Repeat("ab✓日", maxArgContent)
	cmds, cleanup, err := loadCommand("n", content, true)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	var b strings.Builder
	for i, c := range cmds {
		want := "set-buffer -a -b n --"
		if i == 0 {
			want = "set-buffer -b n --"
		}
		if got := strings.Join(c[:len(c)-1], " "); got != want {
			t.Fatalf("command %d: %s", i, got)
		}
		piece := c[len(c)-1]
		if len(piece) > maxArgContent || !utf8.ValidString(piece) {
			t.Fatalf("piece %d: %d bytes, valid UTF-8 %v", i, len(piece), utf8.ValidString(piece))
		}
		b.WriteString(piece)
	}
	if b.String() != content || len(cmds) < 2 {
		t.Fatalf("%d pieces do not make the content", len(cmds))
	}
	for _, s := range []string{"x\x00", strings.Repeat("x", maxPiecedContent+1)} {
		if !streamed(s, true) || streamed(s, false) {
			t.Fatalf("%d bytes: streamed %v remotely, %v locally", len(s), streamed(s, true), streamed(s, false))
		}
		if _, _, err := loadCommand("n", s, true); err == nil {
			t.Fatalf("%d bytes to be streamed were set in pieces", len(s))
		}
	}
	if streamed(content, true) {
		t.Fatal("content within maxPiecedContent streamed")
	}
	local, cleanup, err := loadCommand("n", content, false)
	if err != nil || local[0][0] != "load-buffer" {
		t.Fatalf("local: %v %v", local, err)
	}
	cleanup()
}

// Close after host box's tmux server died is not an error, as it is not
// locally: there is nothing left to delete. (Found by the ssh run of the
// buffer tests: the remote control client's end surfaced as an error.)
func TestRemoteCloseAfterServerDied(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	var ref BufferRef
	e.ok("load_buffer", on(map[string]any{"content": "x"}), &ref)
	he.box.Kill()
	if err := e.srv.Close(context.Background()); err != nil {
		t.Fatalf("Close after the remote tmux server died: %v", err)
	}
	he.box.MustRun("new-session", "-d", "-s", "main") // for the cleanup's no-clients check
}
