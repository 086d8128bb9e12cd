package e2e

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func jsonResult(t *testing.T, v any) *mcp.CallToolResult {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
}

// TestDifferFindsPlantedDifference: the differ of TestReference ignores what
// its normalisations say may differ and reports everything else, so a clean
// differential run means something.
func TestDifferFindsPlantedDifference(t *testing.T) {
	refN, ourN := normaliser{tmpdir: "/tmp/ref-world"}, normaliser{tmpdir: "/tmp/our-world"}
	pane := func(tmp string, pid int, width int) map[string]any {
		return map[string]any{"pane_id": "%1", "pane_pid": pid, "pane_tty": "/dev/pts/9", "session_created": "1700000000",
			"socket_path": tmp + "/tmux-0/w", "pane_width": width, "cursor": "c:abc"}
	}
	same := diffOutcomes(refN.outcomeOf(jsonResult(t, pane("/tmp/ref-world", 11, 80)), nil),
		ourN.outcomeOf(jsonResult(t, pane("/tmp/our-world", 22, 80)), nil))
	if len(same) != 0 {
		t.Errorf("normalised fields reported: %+v", same)
	}

	planted := diffOutcomes(refN.outcomeOf(jsonResult(t, pane("/tmp/ref-world", 11, 80)), nil),
		ourN.outcomeOf(jsonResult(t, pane("/tmp/our-world", 22, 81)), nil))
	if len(planted) != 2 || planted[0].Path != "text.pane_width" || planted[1].Path != "structured.pane_width" ||
		planted[0].Ref != "80" || planted[0].Ours != "81" {
		t.Errorf("planted width difference: %+v", planted)
	}

	extra := pane("/tmp/our-world", 22, 80)
	extra["added"] = true
	if d := diffOutcomes(refN.outcomeOf(jsonResult(t, pane("/tmp/ref-world", 11, 80)), nil),
		ourN.outcomeOf(jsonResult(t, extra), nil)); len(d) != 2 || d[0].Ref != "(absent)" {
		t.Errorf("added field: %+v", d)
	}

	typedValue := diffOutcomes(refN.outcomeOf(jsonResult(t, map[string]any{"value": 2000}), nil),
		ourN.outcomeOf(jsonResult(t, map[string]any{"value": "2000"}), nil))
	if len(typedValue) != 2 {
		t.Errorf("number vs string: %+v", typedValue)
	}

	errRes := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Pane not found"}}}
	if d := diffOutcomes(refN.outcomeOf(errRes, nil), ourN.outcomeOf(errRes, nil)); len(d) != 0 {
		t.Errorf("equal errors: %+v", d)
	}
	typed := func(typ string) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{"error_type": typ}, Content: []mcp.Content{&mcp.TextContent{Text: "differently worded " + typ}}}
	}
	if d := diffOutcomes(refN.outcomeOf(typed("PaneNotFound"), nil), ourN.outcomeOf(typed("PaneNotFound"), nil)); len(d) != 0 {
		t.Errorf("wording is not a difference: %+v", d)
	}
	if d := diffOutcomes(refN.outcomeOf(typed("PaneNotFound"), nil), ourN.outcomeOf(typed("ExpectedToolError"), nil)); len(d) != 1 || d[0].Path != "error_type" {
		t.Errorf("error types: %+v", d)
	}
	if d := diffOutcomes(refN.outcomeOf(errRes, nil), ourN.outcomeOf(jsonResult(t, map[string]any{}), nil)); len(d) != 1 || d[0].Path != "isError" {
		t.Errorf("error vs success: %+v", d)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	if d := diffOutcomes(refN.outcomeOf(text("Waited (timeout 2.0s)"), nil), ourN.outcomeOf(text("Waited (timeout 2s)"), nil)); len(d) != 1 || d[0].Path != "text" {
		t.Errorf("text difference: %+v", d)
	}
}
