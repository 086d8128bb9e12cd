package server

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The full tool suite over ssh (issue 12): with TMUX_MCP_TEST_TRANSPORT=ssh
// every env newEnv makes reaches its tmux server as remote host "box"
// through a loopback sshd (package sshtest), and every tool call that does
// not name a host names "box". The remote side is this machine, so the
// host's socket is the test's own server and the test still inspects it
// with e.tmux. CI runs the representative subset (TestRemoteHostTools);
// this run is the full one, by hand or scripts/ssh-suite.sh.

// sshMode is whether the tool tests run over a remote host.
func sshMode() bool { return os.Getenv("TMUX_MCP_TEST_TRANSPORT") == "ssh" }

// skipOverSSH skips a test that cannot hold on a remote host, with why.
func skipOverSSH(t testing.TB, why string) {
	t.Helper()
	if sshMode() {
		t.Skip("over ssh: " + why)
	}
}

// newSSHEnv is newEnvOn for ssh mode: the server's host "box" is ts.
func newSSHEnv(t testing.TB, ts *tmuxtest.Server, cfg config.Config) *env {
	t.Helper()
	var extra []string
	// The remote side resolves the socket name in TMUX_TMPDIR, which does
	// not cross ssh: the test sshd sets it for its sessions.
	if d := os.Getenv("TMUX_TMPDIR"); d != "" {
		extra = append(extra, "SetEnv TMUX_TMPDIR="+d)
	}
	s := sshtest.Start(t, extra...)
	set, err := remote.NewSet([]remote.Spec{
		{Name: "box", Destination: sshtest.Alias, TmuxBin: ts.Bin, Socket: ts.Socket.Name},
	}, remote.Options{SSHCommand: s.SSHCommand(), ConnectTimeout: 10 * time.Second, AliveInterval: time.Second,
		AliveCount: 5, StartTimeout: 20 * time.Second, Env: tmuxtest.CleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvHosts(t, ts, cfg, testRunner(t, ts), set)
	e.host = "box"
	// Registered last, so it runs first: ssh and the remote clients end
	// before sshd and the tmux server do.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.srv.Close(ctx)
	})
	return e
}

// onHost is args with host e.host added, when the tool takes a host and
// args do not name one.
func (e *env) onHost(name string, args any) any {
	var tool *Tool
	for _, x := range e.srv.All() {
		if x.Name == name {
			tool = x
		}
	}
	if tool == nil {
		return args
	}
	props, _ := tool.inSchema()["properties"].(map[string]any)
	if _, ok := props[HostArgName]; !ok {
		return args
	}
	m := map[string]any{}
	switch a := args.(type) {
	case nil:
	case map[string]any:
		for k, v := range a {
			m[k] = v
		}
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return args
		}
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			return args
		}
	}
	if _, ok := m[HostArgName]; !ok {
		m[HostArgName] = e.host
	}
	return m
}

// TestSSHHarness checks that ssh mode reaches the env's server as host
// "box": a result that did not go through the host would not name it.
func TestSSHHarness(t *testing.T) {
	if !sshMode() {
		t.Skip("TMUX_MCP_TEST_TRANSPORT=ssh only")
	}
	e := newEnv(t)
	var panes []PaneInfo
	e.list("list_panes", map[string]any{"session_name": "main"}, &panes)
	if len(panes) != 1 || panes[0].Host == nil || *panes[0].Host != "box" {
		t.Fatalf("panes %+v: the call did not run on host box", panes)
	}
	if got := e.onHost("list_panes", struct {
		SessionName string `json:"session_name"`
	}{"main"}); got.(map[string]any)[HostArgName] != "box" {
		t.Fatalf("a struct argument did not get the host: %v", got)
	}
}

// watchers are the watchers the env's tool calls use: host box's in ssh
// mode, else the server's own.
func (e *env) watchers() *tmux.Watchers {
	if e.host == "" {
		return e.srv.watch
	}
	eng, err := e.srv.hosts.Get(e.host)
	if err != nil {
		e.t.Fatal(err)
	}
	return eng.Watchers
}

// hostResourceTemplatesIf is the host resource templates when the env has
// a host (they are listed then), else none.
func hostResourceTemplatesIf(e *env) []*mcp.ResourceTemplate {
	if e.host == "" {
		return nil
	}
	return hostResourceTemplates
}
