package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLimitSizeKeepsStructuredValid(t *testing.T) {
	s := allToolsServer(t)
	tool := s.tool("get_pane_info")
	big := strings.Repeat("é", 400_000) + "THE-END"
	out := PaneInfo{PaneID: "%1", PaneTitle: &big}
	raw, _ := json.Marshal(out)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
	got := s.limitSize(tool, res)
	b, _ := json.Marshal(got)
	if len(b) > maxResultBytes {
		t.Fatalf("still %d bytes", len(b))
	}
	validateOutput(t, s, "get_pane_info", got.StructuredContent)
	var p PaneInfo
	_ = json.Unmarshal(got.StructuredContent.(json.RawMessage), &p)
	if !strings.HasPrefix(*p.PaneTitle, "[... truncated ") || !strings.HasSuffix(*p.PaneTitle, "THE-END") {
		t.Errorf("tail not kept or not labelled: %q...", (*p.PaneTitle)[:60])
	}
}

func TestLimitSizeListAndText(t *testing.T) {
	s := allToolsServer(t)
	var rows []any
	for i := 0; i < 30000; i++ {
		rows = append(rows, map[string]any{"pane_id": "%1", "pane_title": strings.Repeat("x", 40)})
	}
	raw, _ := json.Marshal(map[string]any{"result": rows})
	res := s.limitSize(s.tool("list_panes"), &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)})
	if b, _ := json.Marshal(res); len(b) > maxResultBytes {
		t.Errorf("list still %d bytes", len(b))
	}
	validateOutput(t, s, "list_panes", res.StructuredContent)

	txt := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("line\n", 300_000) + "last"}}}
	res = s.limitSize(s.tool("list_panes"), txt)
	got := text(res)
	if len(got) > maxResultBytes || !strings.HasPrefix(got, "[... truncated ") || !strings.HasSuffix(got, "last") {
		t.Errorf("text cap: %d bytes, head %q", len(got), got[:40])
	}
}
