package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestDoctorHosts: doctor checks each remote host (a real sshd on
// loopback): reachable with its tmux version and a round trip, and for an
// unknown host key it says to run ssh once.
func TestDoctorHosts(t *testing.T) {
	s := sshtest.Start(t)
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin,
		"TMUX_MCP_HOSTS":       "box=" + sshtest.Alias + "?socket=" + ts.Socket.Name,
		"TMUX_MCP_SSH_COMMAND": "ssh -F " + s.Config}
	code, out, errOut := run(t, env, "doctor")
	for _, want := range []string{"host box:", "reachable (sshtest, connect", "tmux 3.", "socket name " + ts.Socket.Name, "server running, 1 session(s), round trip"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 0 {
		t.Errorf("doctor exit %d:\n%s", code, out)
	}
	t.Log(out[strings.Index(out, "host box:"):])

	known, _ := os.ReadFile(s.KnownHosts())
	if err := os.WriteFile(s.KnownHosts(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, env, "doctor")
	if code != 1 || !strings.Contains(out, "UNREACHABLE") || !strings.Contains(out, "run `ssh sshtest` once") {
		t.Errorf("unknown host key: exit %d\n%s", code, out)
	}
	_ = os.WriteFile(s.KnownHosts(), known, 0o600)
	env["TMUX_MCP_HOSTS"] = "box=" + sshtest.Alias + "?tmux=/nonexistent/tmux"
	code, out, _ = run(t, env, "doctor")
	if code != 1 || !strings.Contains(out, "tmux does not run there") {
		t.Errorf("no tmux there: exit %d\n%s", code, out)
	}
}

// TestCallOnHost: the server the CLI builds reaches the hosts of
// TMUX_MCP_HOSTS through TMUX_MCP_SSH_COMMAND, and closes them when it is
// done: no ssh process of ours outlives the call.
func TestCallOnHost(t *testing.T) {
	var extra []string
	if d := os.Getenv("TMUX_TMPDIR"); d != "" { // does not cross ssh by itself
		extra = append(extra, "SetEnv TMUX_TMPDIR="+d)
	}
	s := sshtest.Start(t, extra...)
	ts := tmuxtest.New(t)
	local := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": local.Socket.Name, "TMUX_MCP_TMUX_BIN": local.Bin,
		"TMUX_MCP_HOSTS":       "box=" + sshtest.Alias + "?socket=" + ts.Socket.Name + "&tmux=" + ts.Bin,
		"TMUX_MCP_SSH_COMMAND": "ssh -F " + s.Config}
	tty := ts.MustRun("display-message", "-p", "-t", "%0", "#{pane_tty}")
	code, out, errOut := run(t, env, "call", "get_pane_info", `{"pane_id":"%0","host":"box"}`)
	if code != 0 || !strings.Contains(out, `"host": "box"`) || !strings.Contains(out, tty) {
		t.Fatalf("call on host box: %d %s %s", code, out, errOut)
	}
	// Close stopped the host's masters before run returned: no new ssh
	// can start after it, and a one-off still ending (a detach's round
	// trip, see tmux.attachGate) ends with its master. The remote clients
	// end as sshd sees their channels close.
	deadline := time.Now().Add(5 * time.Second)
	for kids := sshtest.Children(); len(kids) > 0; kids = sshtest.Children() {
		if time.Now().After(deadline) {
			t.Fatalf("ssh processes left after the call: %v", kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		clients, _ := ts.Run("list-clients")
		return clients == ""
	})
}
