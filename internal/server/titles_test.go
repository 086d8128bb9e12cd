package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTitlesMatchReference: every tool the reference has carries the
// reference's title, read from its tools/list (libtmux-mcp 0.1.0a20) into
// testdata/reference/titles.json, so a client that shows titles sees the same
// names on both servers.
func TestTitlesMatchReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", "titles.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	s := allToolsServer(t)
	seen := 0
	for _, tool := range s.All() {
		ref, ok := want[tool.Name]
		if !ok {
			continue // our addition: no reference title
		}
		seen++
		if tool.Title != ref {
			t.Errorf("%s: title %q, reference %q", tool.Name, tool.Title, ref)
		}
	}
	if seen != len(want) {
		t.Errorf("compared %d tools, reference has %d", seen, len(want))
	}
}

// TestListTextIsBareArray: a list tool's text content is the bare JSON
// array, as the reference sends it; the structured copy stays
// {"result": [...]} (issue 10 item 7).
func TestListTextIsBareArray(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"list_sessions", "list_windows", "list_panes", "list_servers"} {
		res := e.ok(name, map[string]any{}, nil)
		txt := text(res)
		var arr []any
		if err := json.Unmarshal([]byte(txt), &arr); err != nil || len(arr) == 0 {
			t.Errorf("%s text is not a non-empty JSON array: %.80s", name, txt)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var wrapped struct {
			Result []any `json:"result"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil || len(wrapped.Result) != len(arr) {
			t.Errorf("%s structured %.80s", name, raw)
		}
	}
}
