package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestLargeResultsOverStdio: tool results over the size that the server
// encodes ahead of time (server.encodeResults, stdio.Framer.Splice) reach a
// real client over stdio whole, and never as the stand-in the SDK encodes
// in their place. The built binary's stdio path is the Framer's
// mcp.Connection (stdio/conn.go), which must put the encoding back as
// Framer.Write does; a merge once left it writing the stand-in.
func TestLargeResultsOverStdio(t *testing.T) {
	ts := tmuxtest.New(t)
	for range 60 {
		ts.MustRun("new-window", "-d", "-t", "main", "sleep 600")
	}
	cs := connect(t, serverCmd(ts))
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_panes", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_panes: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res)
	if strings.Contains(string(raw), "tmux-mcp-splice") {
		t.Fatalf("the client received a stand-in instead of the result: %.300s", raw)
	}
	var listed struct {
		Result []struct {
			PaneID string `json:"pane_id"`
		} `json:"result"`
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(sc, &listed); err != nil {
		t.Fatalf("structured content %.300s: %v", sc, err)
	}
	want := strings.Count(ts.MustRun("list-panes", "-a", "-F", "#{pane_id}"), "%")
	if len(listed.Result) != want {
		t.Fatalf("list_panes listed %d panes, tmux has %d; the client got %.300s", len(listed.Result), want, raw)
	}
	if len(raw) < 16<<10 {
		t.Fatalf("list_panes answered %d bytes: too small to be encoded ahead of time; add panes", len(raw))
	}
	if len(res.Content) == 0 || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), `"pane_id"`) {
		t.Errorf("the text block does not hold the panes: %.300v", res.Content)
	}
}
