package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

func TestBatchTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	op := func(tool string, args map[string]any) map[string]any {
		if args == nil {
			return map[string]any{"tool": tool}
		}
		return map[string]any{"tool": tool, "arguments": args}
	}
	cases := []struct {
		name       string
		batch      string
		ops        []any
		onError    string
		wantOK     int
		wantFailed int
		stoppedAt  any
		errorHas   []string // per failing row, in order
	}{
		{"all succeed", "call_readonly_tools_batch", []any{op("get_pane_info", map[string]any{"pane_id": "%0"}), op("list_panes", nil)}, "", 2, 0, nil, nil},
		{"stop at first failure", "call_readonly_tools_batch", []any{op("get_pane_info", map[string]any{"pane_id": "%9"}), op("list_panes", nil)}, "stop", 0, 1, 0.0, []string{"Pane not found"}},
		{"continue past failures", "call_readonly_tools_batch", []any{op("no_such", nil), op("call_readonly_tools_batch", nil), op("list_panes", nil)}, "continue", 1, 2, nil,
			[]string{"unknown tool", "cannot be nested"}},
		{"nested validation", "call_readonly_tools_batch", []any{op("get_pane_info", map[string]any{"bogus": 1})}, "continue", 0, 1, nil, []string{"unrecognized argument(s): bogus"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"operations": c.ops}
			if c.onError != "" {
				args["on_error"] = c.onError
			}
			var res ToolCallBatchResult
			e.ok(c.batch, args, &res)
			if res.Succeeded != c.wantOK || res.Failed != c.wantFailed {
				t.Errorf("succeeded %d failed %d", res.Succeeded, res.Failed)
			}
			if (c.stoppedAt == nil) != (res.StoppedAt == nil) {
				t.Errorf("stopped_at %v", res.StoppedAt)
			}
			i := 0
			for _, r := range res.Results {
				if r.Success {
					if r.StructuredContent == nil || len(r.Content) == 0 {
						t.Errorf("row %d has no content", r.Index)
					}
					continue
				}
				if i < len(c.errorHas) && (r.Error == nil || !strings.Contains(*r.Error, c.errorHas[i])) {
					t.Errorf("row %d error %v, want %q", r.Index, r.Error, c.errorHas[i])
				}
				i++
			}
		})
	}
	msg, _ := e.fail("call_readonly_tools_batch", map[string]any{"operations": []any{}})
	if !strings.Contains(msg, "1 to 1000") {
		t.Errorf("empty batch: %q", msg)
	}
	msg, _ = e.fail("call_readonly_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "list_panes", "extra": 1}}})
	if !strings.Contains(msg, "operations") {
		t.Errorf("extra op key: %q", msg)
	}
}

// A batch cannot reach a tool the client cannot see.
func TestBatchRespectsVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withToolsets("batch", "server"))
	var res ToolCallBatchResult
	e.ok("call_readonly_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "list_panes"}}}, &res)
	if res.Failed != 1 || !strings.Contains(*res.Results[0].Error, "not available") {
		t.Errorf("hidden tool ran: %+v", res.Results[0])
	}
	e2 := newEnv(t, withTier(config.Readonly))
	e2.fail("call_mutating_tools_batch", map[string]any{"operations": []any{map[string]any{"tool": "list_panes"}}})
}

func TestCapBatch(t *testing.T) {
	big := strings.Repeat("x", 400_000)
	res := ToolCallBatchResult{}
	for i := 0; i < 4; i++ {
		res.Results = append(res.Results, BatchResultRow{Index: i, Success: true, Content: []map[string]any{{"type": "text", "text": big}}})
	}
	capBatch(&res)
	if !res.ResponseTruncated || res.ResponseTruncatedBytes < 600_000 {
		t.Errorf("truncated=%v bytes=%d", res.ResponseTruncated, res.ResponseTruncatedBytes)
	}
	if res.Results[3].Content[0]["text"] != big {
		t.Error("the last row should be kept")
	}
	// What capBatch leaves fits the 1 MB result cap as sent (structured
	// JSON plus its text copy), so limitSize does not cut rows after it.
	text, _ := json.Marshal(res)
	sent := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}
	if wire, _ := json.Marshal(sent); len(wire) > maxResultBytes {
		t.Errorf("capped batch is %d bytes on the wire", len(wire))
	}
	srv, err := New(config.Config{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.limitSize(srv.tool("call_readonly_tools_batch"), sent); got != sent {
		t.Error("limitSize cut the capped batch again")
	}
}
