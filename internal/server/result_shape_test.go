package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The tools whose Python return type is str, as the reference's tools/list
// of libtmux-mcp 0.1.0a20 marks them (a wrapped result of type string).
var referenceStringTools = []string{
	"capture_pane", "clear_pane", "delete_buffer", "display_message", "kill_pane", "kill_server",
	"kill_session", "kill_window", "paste_buffer", "paste_text", "pipe_pane", "send_keys",
	"signal_channel", "wait_for_channel",
}

// String results advertise exactly the output schema FastMCP gives a
// wrapped str (copied from the reference's tools/list), and only the
// reference's string tools have it; capture_pane's adds its styles.
func TestStringToolsOutputSchema(t *testing.T) {
	t.Parallel()
	s := allToolsServer(t)
	var want map[string]any
	if err := json.Unmarshal([]byte(`{"properties": {"result": {"type": "string"}}, "required": ["result"], "type": "object", "x-fastmcp-wrap-result": true}`), &want); err != nil {
		t.Fatal(err)
	}
	// capture_pane's has its one addition beside result, styles (an
	// optional list of strings, present only when asked for).
	var wantCapture map[string]any
	if err := json.Unmarshal([]byte(`{"properties": {"result": {"type": "string"}, "styles": {"type": "array", "items": {"type": "string"}}}, "required": ["result"], "type": "object", "x-fastmcp-wrap-result": true}`), &wantCapture); err != nil {
		t.Fatal(err)
	}
	var stringTools []string
	for _, tool := range s.All() {
		raw, _ := json.Marshal(tool.mcpTool().OutputSchema)
		var got map[string]any
		_ = json.Unmarshal(raw, &got)
		if reflect.DeepEqual(got, want) || tool.Name == "capture_pane" && reflect.DeepEqual(got, wantCapture) {
			stringTools = append(stringTools, tool.Name)
		} else if slices.Contains(referenceStringTools, tool.Name) {
			t.Errorf("%s: output schema %s", tool.Name, raw)
		}
	}
	slices.Sort(stringTools)
	if !slices.Equal(stringTools, referenceStringTools) {
		t.Errorf("tools with a wrapped string result: %v, want %v", stringTools, referenceStringTools)
	}
}

// On the wire a string result is the string in the text content, the same
// string under structuredContent.result, and FastMCP's _meta marker; a
// list result's text is the bare JSON array (as pydantic writes it, '<'
// and '&' unescaped) while its structured content stays {"result": [...]}.
func TestWrappedResultsOnTheWire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := strings.TrimSpace(e.tmux.MustRun("display-message", "-p", "-t", "main", "#{pane_id}"))
	e.tmux.MustRun("rename-window", "-t", "main", "a<b>&c")
	for _, c := range []struct {
		tool     string
		args     map[string]any
		wantText string // for string results
	}{
		{"display_message", map[string]any{"pane_id": pane, "format_string": "<#{pane_id}>"}, "<" + pane + ">"},
		{"send_keys", map[string]any{"pane_id": pane, "keys": "true", "enter": false}, "Keys sent to pane " + pane},
		{"capture_pane", map[string]any{"pane_id": pane}, ""},
		{"list_sessions", nil, ""},
		{"list_windows", map[string]any{"session_name": "main"}, ""},
		{"list_panes", map[string]any{"session_name": "main"}, ""},
	} {
		res := e.ok(c.tool, c.args, nil)
		checkTextCopy(t, e.srv, c.tool, res)
		txt := text(res)
		if c.wantText != "" && txt != c.wantText {
			t.Errorf("%s: text %q, want %q", c.tool, txt, c.wantText)
		}
		if strings.HasPrefix(c.tool, "list_") {
			if !strings.HasPrefix(txt, "[") {
				t.Errorf("%s: text %.80q is not a bare JSON array", c.tool, txt)
			}
			if strings.Contains(txt, `\u003c`) || strings.Contains(txt, `\u0026`) {
				t.Errorf("%s: text escapes HTML characters: %.200q", c.tool, txt)
			}
		}
	}
	// An empty list is [] in both places, never null.
	res := e.ok("list_panes", map[string]any{"session_name": "main", "filters": map[string]any{"pane_id": "%99999"}}, nil)
	if text(res) != "[]" {
		t.Errorf("empty list text %q", text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if string(raw) != `{"result":[]}` {
		t.Errorf("empty list structured %s", raw)
	}
}
