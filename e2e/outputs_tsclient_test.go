package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// tsOutputsRun is what scripts/ts-client/outputs.mjs reports.
type tsOutputsRun struct {
	OutputSchemas int               `json:"outputSchemas"`
	Compiled      int               `json:"compiled"`
	IDs           map[string]string `json:"ids"`
	Validators    int               `json:"validators"`
	Calls         []struct {
		Tool         string `json:"tool"`
		IsError      bool   `json:"isError"`
		Structured   bool   `json:"structured"`
		Text         string `json:"text"`
		Thrown       string `json:"thrown"`
		HasValidator bool   `json:"hasValidator"`
		RejectsEmpty bool   `json:"rejectsEmpty"`
	} `json:"calls"`
}

// TestTypeScriptClientValidatesOutputs: the official TypeScript SDK client
// validates each answer's structuredContent against the validator it
// compiled from the tool's outputSchema at tools/list, and refuses the call
// when they differ. Over stdio at the destructive tier it calls two tools
// of every output schema that several tools share, and the tools with the
// largest schemas of their own. Every call must answer without error, with
// structured content the client accepted, through a validator that refuses
// an empty object. No output schema carries an $id: a client that compiles
// every tool's schema into one Ajv instance (MCP Inspector does) is refused
// a second schema of the same id ("already exists"), so sharing ids would
// cost such clients their validators.
func TestTypeScriptClientValidatesOutputs(t *testing.T) {
	node := tsClient(t)
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	ts.MustRun("set-hook", "-g", "-t", "main", "pane-exited", "display-message exited")
	calls := []struct {
		tool string
		args map[string]any
	}{
		// pane (9 tools share it)
		{"select_pane", map[string]any{"pane_id": "%0"}},
		{"set_pane_title", map[string]any{"pane_id": "%0", "title": "checked"}},
		// window (7)
		{"get_window_info", map[string]any{"session_name": "main"}},
		{"rename_window", map[string]any{"session_name": "main", "new_name": "w"}},
		// session (3)
		{"get_session_info", map[string]any{"session_name": "main"}},
		{"rename_session", map[string]any{"session_name": "main", "new_name": "main"}},
		// hooks (2)
		{"show_hooks", map[string]any{"global_": true}},
		{"show_hook", map[string]any{"hook_name": "pane-exited", "global_": true}},
		// batch (3)
		{"call_readonly_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "list_sessions"}}}},
		{"call_mutating_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0"}}}}},
		// run (2)
		{"run_command", map[string]any{"pane_id": "%0", "command": "echo ok", "timeout": 20}},
		// schemas of their own: the largest, and the one with a type list of values
		{"snapshot_pane", map[string]any{"pane_id": "%0"}},
		{"list_panes", map[string]any{"session_name": "main"}},
		{"get_pane_info", map[string]any{"pane_id": "%0"}},
		{"list_windows", map[string]any{"session_name": "main"}},
		{"list_sessions", map[string]any{}},
		{"show_environment", map[string]any{"session_name": "main"}},
	}
	list := make([][2]any, len(calls))
	for i, c := range calls {
		list[i] = [2]any{c.tool, c.args}
	}
	arg, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var got tsOutputsRun
	if err := runTSScript(ctx, node, []string{"TMUX_MCP_SOCKET=" + ts.Socket.Name, "TMUX_MCP_TMUX_BIN=" + ts.Bin,
		"TMUX_MCP_SAFETY=destructive", "TMUX_MCP_AUDIT_LOG=/dev/null"}, &got, "outputs.mjs", binary, string(arg)); err != nil {
		t.Fatal(err)
	}
	if got.Validators != got.OutputSchemas {
		t.Errorf("the client holds %d validators for %d output schemas", got.Validators, got.OutputSchemas)
	}
	if len(got.IDs) != 0 {
		t.Errorf("output schemas carry ids %v: a client compiling them into one Ajv instance refuses a repeated id", got.IDs)
	}
	if len(got.Calls) != len(calls) {
		t.Fatalf("%d calls reported, want %d", len(got.Calls), len(calls))
	}
	for _, c := range got.Calls {
		if c.Thrown != "" || c.IsError || !c.Structured || !c.HasValidator || !c.RejectsEmpty {
			t.Errorf("%s: thrown %q, isError %v (%s), structured %v, validator %v refusing {} %v",
				c.Tool, c.Thrown, c.IsError, c.Text, c.Structured, c.HasValidator, c.RejectsEmpty)
		}
	}
	t.Logf("TypeScript SDK client: %d output schemas, %d compiled, %d calls validated", got.OutputSchemas, got.Compiled, len(got.Calls))
}
