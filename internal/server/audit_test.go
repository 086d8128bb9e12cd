package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestAuditRecords: one record per call, nested batch calls and refusals
// included, and no secret in any of them.
func TestAuditRecords(t *testing.T) {
	ts := tmuxtest.New(t)
	var buf bytes.Buffer
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Readonly, WaitMax: 30}
	srv, err := New(cfg, Options{Tmux: &tmux.Client{Runner: ts.Runner()}, Audit: audit.New(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := srv.MCP().Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "audit-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()
	secret := "TOPSECRET-42"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"get_pane_info", map[string]any{"pane_id": "%0"}},
		{"get_pane_info", map[string]any{"pane_id": "%0", "keys": secret}}, // rejected argument, still redacted
		{"call_readonly_tools_batch", map[string]any{"operations": []any{
			map[string]any{"tool": "list_panes", "arguments": map[string]any{"filters": map[string]any{"pane_id": "%0"}}},
			map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"text": []any{secret}, "value": 42, "environment": map[string]any{"K": secret}}},
		}, "on_error": "continue"}},
		{"call_mutating_tools_batch", map[string]any{"command": secret}}, // refused by the tier gate
	}
	for _, c := range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatal(err)
		}
	}
	log := buf.String()
	if strings.Contains(log, secret) {
		t.Fatalf("secret in audit log:\n%s", log)
	}
	var recs []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		recs = append(recs, r)
	}
	want := []struct{ tool, outcome, errType, parent string }{
		{"get_pane_info", "ok", "", ""},
		{"get_pane_info", "error", "ValidationError", ""},
		{"list_panes", "ok", "", "3"},
		{"get_pane_info", "error", "ValidationError", "3"},
		{"call_readonly_tools_batch", "ok", "", ""},
		{"call_mutating_tools_batch", "error", "ExpectedToolError", ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), log)
	}
	for i, w := range want {
		r := recs[i]
		if r.Tool != w.tool || r.Outcome != w.outcome || r.ErrorType != w.errType || r.Parent != w.parent || r.Client != "audit-test" {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
	}
	t.Logf("audit excerpt:\n%s", log)
}

// clientName agrees with the SDK's ClientInfo for each form the client's
// identity can take, without its re-encoding.
func TestClientNameMatchesClientInfo(t *testing.T) {
	cases := []struct {
		name string
		meta mcp.Meta
		want string
	}{
		{"2026-07-28 over the wire (a JSON map)", mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "claude-code", "version": "2.1"}}, "claude-code"},
		{"in process (the typed value)", mcp.Meta{mcp.MetaKeyClientInfo: &mcp.Implementation{Name: "inproc", Version: "1"}}, "inproc"},
		{"no _meta, no session", nil, ""},
		{"other _meta only", mcp.Meta{"progressToken": 1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: c.meta, Name: "x"}}
			sdk := ""
			if ci := req.ClientInfo(); ci != nil {
				sdk = ci.Name
			}
			if got := clientName(req); got != c.want || got != sdk {
				t.Fatalf("clientName %q, ClientInfo %q, want %q", got, sdk, c.want)
			}
		})
	}
}
