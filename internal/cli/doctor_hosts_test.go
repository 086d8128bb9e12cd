package cli

import (
	"os"
	"strings"
	"testing"

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
