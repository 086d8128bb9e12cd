package server

import (
	"os"
	"strings"
	"testing"
)

// TestDocsUpToDate fails when docs/tools.md or the README's tool table
// differ from what the registry generates (run `go run ./cmd/tmux-mcp docs`).
func TestDocsUpToDate(t *testing.T) {
	want, err := ToolsMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/tools.md")
	if err != nil || string(got) != want {
		t.Errorf("docs/tools.md is stale or missing (%v); run: go run ./cmd/tmux-mcp docs", err)
	}
	table, err := ReadmeToolTable()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "<!-- tools:begin -->\n"+table+"<!-- tools:end -->") {
		t.Error("README tool table is stale; run: go run ./cmd/tmux-mcp docs")
	}
}
