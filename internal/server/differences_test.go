package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferencesTable: every deliberate difference is complete, has a
// unique key (the differential test cites it) and appears in the generated
// docs/tools.md table.
func TestDifferencesTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "## Where we differ from the reference, and why") {
		t.Error("docs/tools.md lacks the differences table")
	}
	keys := map[string]bool{}
	for _, d := range Differences {
		if d.Key == "" || d.What == "" || d.Reference == "" || d.Ours == "" || d.Why == "" {
			t.Errorf("incomplete row %+v", d)
		}
		if keys[d.Key] {
			t.Errorf("duplicate key %q", d.Key)
		}
		keys[d.Key] = true
		if !strings.Contains(string(doc), "| "+d.What+" | "+d.Reference+" | ") {
			t.Errorf("docs/tools.md lacks the row %q (run go run ./cmd/tmux-mcp docs)", d.Key)
		}
	}
}
