package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := run(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "tmux-mcp ") {
		t.Errorf("--version: %d %q", code, out)
	}
	code, _, errOut := run(t, nil, "--help")
	if code != 0 || !strings.Contains(errOut, "tmux-mcp [flags] call TOOL") || !strings.Contains(errOut, "-safety") {
		t.Errorf("--help: %d %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "frobnicate")
	if code != 2 || !strings.Contains(errOut, "unknown subcommand") {
		t.Errorf("unknown subcommand: %d %q", code, errOut)
	}
}

func TestToolsSubcommandPerTier(t *testing.T) {
	counts := map[string]int{}
	for _, tier := range []string{"readonly", "mutating", "destructive"} {
		code, out, _ := run(t, map[string]string{"TMUX_MCP_SAFETY": tier}, "tools")
		if code != 0 || !strings.Contains(out, "tools visible at the "+tier+" tier") {
			t.Fatalf("tools at %s: %d %q", tier, code, out)
		}
		counts[tier] = strings.Count(out, "\n") - 3
		if tier == "readonly" && (strings.Contains(out, " mutating ") || strings.Contains(out, " destructive ")) {
			t.Errorf("readonly lists higher tiers:\n%s", out)
		}
	}
	if !(counts["readonly"] <= counts["mutating"] && counts["mutating"] <= counts["destructive"]) {
		t.Errorf("tool counts not monotonic: %v", counts)
	}
}

// Invalid settings fail closed and never echo the value.
func TestInvalidConfiguration(t *testing.T) {
	secret := "s3cr3t-value"
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     string
	}{
		{"bad tier falls back to readonly", map[string]string{"TMUX_MCP_SAFETY": secret}, []string{"tools"}, 0, "readonly tier"},
		{"reference tier name", map[string]string{"LIBTMUX_SAFETY": "destructive"}, []string{"tools"}, 0, "destructive tier"},
		{"ours wins over reference", map[string]string{"LIBTMUX_SAFETY": "destructive", "TMUX_MCP_SAFETY": "readonly"}, []string{"tools"}, 0, "readonly tier"},
		{"bad flag tier", nil, []string{"--safety", secret, "tools"}, 0, "readonly tier"},
		{"bad suppress-history aborts", map[string]string{"LIBTMUX_SUPPRESS_HISTORY": secret}, []string{"tools"}, 2, "must be 0 or 1"},
		{"bad wait ceiling warns", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": secret}, []string{"doctor"}, -1, "wait ceiling:    30s"},
		{"wait ceiling clamped", map[string]string{"TMUX_MCP_WAIT_MAX_SECONDS": "1000"}, []string{"doctor"}, -1, "wait ceiling:    120s"},
		{"unknown toolset", map[string]string{"TMUX_MCP_TOOLSETS": secret}, []string{"tools"}, 2, "unknown toolset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.env, c.args...)
			if c.wantCode >= 0 && code != c.wantCode {
				t.Errorf("exit %d, want %d (%s)", code, c.wantCode, errOut)
			}
			if !strings.Contains(out+errOut, c.want) {
				t.Errorf("output lacks %q:\n%s\n%s", c.want, out, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("a value was echoed:\n%s\n%s", out, errOut)
			}
		})
	}
}

func TestCallSubcommand(t *testing.T) {
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin}
	code, out, errOut := run(t, env, "call", "get_pane_info", `{"pane_id":"%0"}`)
	if code != 0 {
		t.Fatalf("call: %d %s", code, errOut)
	}
	var res struct {
		Structured map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Structured["pane_id"] != "%0" {
		t.Errorf("call output: %v %s", err, out)
	}
	code, out, _ = run(t, env, "call", "get_pane_info", `{"pane_id":"%42"}`)
	if code != 1 || !strings.Contains(out, "PaneNotFound") {
		t.Errorf("tool error: %d %s", code, out)
	}
	code, _, errOut = run(t, env, "call", "get_pane_info", `{not json`)
	if code != 2 || !strings.Contains(errOut, "not valid JSON") {
		t.Errorf("bad JSON: %d %s", code, errOut)
	}
	// A tool hidden by the tier is refused through the same middleware.
	code, out, _ = run(t, map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_SAFETY": "readonly"}, "call", "get_pane_info", `{}`)
	if code != 0 {
		t.Errorf("readonly call of a readonly tool: %d %s", code, out)
	}
}

func TestDoctor(t *testing.T) {
	ts := tmuxtest.New(t)
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin,
		"TMUX": ts.SocketPath() + ",123,0", "TMUX_PANE": "%0"}
	code, out, _ := run(t, env, "doctor")
	for _, want := range []string{"tmux 3.", "running (pid", "1 session(s)", "inside tmux: pane %0", "safety:          mutating", "claude mcp add tmux"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("doctor exit %d", code)
	}
	code, out, _ = run(t, map[string]string{"TMUX_MCP_TMUX_BIN": "/nonexistent/tmux"}, "doctor")
	if code != 1 || !strings.Contains(out, "NOT FOUND") {
		t.Errorf("missing tmux: %d %s", code, out)
	}
}

func TestTooOld(t *testing.T) {
	for v, want := range map[string]bool{"tmux 3.3a": false, "tmux 3.2": false, "tmux 3.1c": true, "tmux 2.9": true,
		"tmux next-3.6": false, "tmux master": false, "garbage": true, "tmux 10.0": false} {
		if got := tooOld(v); got != want {
			t.Errorf("tooOld(%q)=%v", v, got)
		}
	}
}
