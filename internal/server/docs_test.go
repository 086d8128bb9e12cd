package server

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
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

// TestEveryArgumentDocumented keeps the trade made for tools/list size
// honest: an argument without a description in its schema must be one of
// the shared arguments that the instructions and docs/tools.md explain, and
// a shared argument carries a description only where it means something
// particular to its tool (create_session's session_name names the new
// session), so those stay few: under 1 KB of tools/list in all.
func TestEveryArgumentDocumented(t *testing.T) {
	s, err := New(config.Config{Safety: config.Destructive, PromptsAsTools: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sharedArgOrder {
		if sharedArgDocs[n] == "" {
			t.Errorf("shared argument %s has no entry in sharedArgDocs", n)
		}
	}
	instr := s.Instructions()
	for _, n := range []string{"socket_name", "socket_path", "session_name", "session_id", "window_id", "window_index"} {
		if !strings.Contains(instr, n) {
			t.Errorf("instructions do not mention the shared argument %s", n)
		}
	}
	sharedBytes := 0
	var particular []string
	for _, tool := range s.all {
		props, _ := tool.inSchema()["properties"].(map[string]any)
		for name, p := range props {
			desc, _ := p.(map[string]any)["description"].(string)
			_, shared := sharedArgDocs[name]
			switch {
			case shared && desc != "":
				sharedBytes += len(desc)
				particular = append(particular, tool.Name+"."+name)
			case !shared && desc == "":
				t.Errorf("%s.%s: no description, in the schema or in sharedArgDocs", tool.Name, name)
			}
		}
	}
	if sharedBytes > 1024 {
		t.Errorf("shared arguments carry %d bytes of descriptions in tools/list (%v); describe them once in sharedArgDocs unless the meaning is particular to the tool", sharedBytes, particular)
	}
}

// TestToolListBreakdown checks the parts `tmux-mcp tools --stats` prints
// against the whole tools/list and an independent count of the argument
// descriptions.
func TestToolListBreakdown(t *testing.T) {
	s, err := New(config.Config{Safety: config.Mutating}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.ToolListBreakdown()
	if err != nil {
		t.Fatal(err)
	}
	total, _, err := s.ToolListSizes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != total {
		t.Errorf("breakdown total %d, ToolListSizes %d", p.Total, total)
	}
	sum := p.Names + p.Descriptions + p.InputSchemas + p.OutputSchema + p.Annotations
	// What is left is JSON punctuation and member names: "name":, "title":
	// and so on, a few dozen bytes per tool.
	if over := p.Total - sum; over < 0 || over > 100*len(s.Visible()) {
		t.Errorf("parts sum to %d of %d bytes", sum, p.Total)
	}
	// A description never stands alone in a property's schema, so removing
	// it removes one comma with it.
	descs := 0
	var count func(v any)
	count = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if d, ok := e.(string); ok && k == "description" {
					b, _ := json.Marshal(d)
					descs += len(`,"description":`) + len(b)
					continue
				}
				count(e)
			}
		case []any:
			for _, e := range x {
				count(e)
			}
		}
	}
	for _, tool := range s.Visible() {
		count(tool.inSchema()["properties"])
	}
	if p.ParamDescs != descs {
		t.Errorf("argument descriptions: breakdown %d, counted %d", p.ParamDescs, descs)
	}
	if p.ModelFacing >= p.Total-p.OutputSchema || p.ModelFacing < p.Descriptions+p.InputSchemas {
		t.Errorf("model-facing %d outside [%d, %d)", p.ModelFacing, p.Descriptions+p.InputSchemas, p.Total-p.OutputSchema)
	}
}
