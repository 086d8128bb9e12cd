package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestAgentSessionTranscript drives the built binary over stdio with the Go
// SDK's client through what an agent does with interactive programs: a
// Python REPL turn by turn, a y/n prompt, vim opened and quit. Each call
// and its structured answer go to the log: the transcript of issue 20.
func TestAgentSessionTranscript(t *testing.T) {
	fgcorpus.Require(t, "python3", "vim", "bash")
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	cs := connect(t, serverCmd(ts))
	var log strings.Builder
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, _ := json.Marshal(args)
		var out map[string]any
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &out)
		shown := map[string]any{}
		for _, k := range []string{"outcome", "output", "prompt", "tail"} {
			if v, ok := out[k]; ok {
				shown[k] = v
			}
		}
		if fg, ok := out["foreground"].(map[string]any); ok {
			shown["foreground"] = map[string]any{"command": fg["command"], "state": fg["state"], "basis": fg["basis"], "secret": fg["secret"]}
		}
		s, _ := json.Marshal(shown)
		if res.IsError {
			s, _ = json.Marshal(res.Content)
		}
		log.WriteString("→ " + name + " " + string(a) + "\n← " + string(s) + "\n")
		if res.IsError {
			t.Fatalf("%s failed:\n%s", name, log.String())
		}
		return out
	}
	want := func(out map[string]any, key string, v any) {
		t.Helper()
		got, _ := json.Marshal(out[key])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Fatalf("%s = %s, want %s\n%s", key, got, exp, log.String())
		}
	}
	defer func() { t.Log("\n" + log.String()) }()

	// A Python REPL, turn by turn.
	out := call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "python3 -q"})
	want(out, "prompt", ">>> ")
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "1+1"})
	want(out, "output", []string{"2"})
	want(out, "prompt", ">>> ")
	want(out, "outcome", "waiting_for_input")
	call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "def sq(x):\n    return x*x\n"})
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "sq(12)"})
	want(out, "output", []string{"144"})
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "exit()", "until": "exit"})
	want(out, "outcome", "exited")

	// A y/n question.
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": `read -p "Continue? [y/N] " a; echo "answer: $a"`})
	want(out, "prompt", "Continue? [y/N] ")
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "y", "until": "exit"})
	want(out, "output", []string{"answer: y"})

	// vim, opened and quit.
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "vim -u NONE -N"})
	if fg, _ := out["foreground"].(map[string]any); fg["command"] != "vim" || out["outcome"] != "waiting_for_input" {
		t.Fatalf("vim: %v\n%s", out, log.String())
	}
	out = call("snapshot_pane", map[string]any{"pane_id": "%0"})
	if alt, _ := out["alternate_on"].(bool); !alt {
		t.Fatalf("vim is not on the alternate screen\n%s", log.String())
	}
	out = call("send_and_wait", map[string]any{"pane_id": "%0", "keys": ":q", "until": "exit"})
	want(out, "outcome", "exited")
	if fg, _ := out["foreground"].(map[string]any); fg["command"] != "bash" {
		t.Fatalf("after :q the shell should have the terminal: %v\n%s", out, log.String())
	}
}
