package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// referenceTools reads testdata/reference/tools.json: what a model reads of
// the reference's tools/list (see ReferenceModelFacingBytes).
func referenceTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Tools
}

// TestReferenceModelFacingBytes: the constant tools --stats compares with is
// the fixture measured the way our own figure is.
func TestReferenceModelFacingBytes(t *testing.T) {
	tools := referenceTools(t)
	if len(tools) != 56 {
		t.Fatalf("fixture has %d tools, the reference has 56 at the destructive tier", len(tools))
	}
	n, err := modelFacingBytes(tools, false)
	if err != nil {
		t.Fatal(err)
	}
	if n != ReferenceModelFacingBytes {
		t.Errorf("reference fixture measures %d bytes, ReferenceModelFacingBytes says %d", n, ReferenceModelFacingBytes)
	}
}

// TestModelFacingBudget: what a model reads of our tools/list at the
// destructive tier, with the host argument of remote tmux on every tool,
// stays within ModelFacingBudget of the reference's.
func TestModelFacingBudget(t *testing.T) {
	s, err := New(config.Config{Safety: config.Destructive, SuppressHistory: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.ToolListBreakdown()
	if err != nil {
		t.Fatal(err)
	}
	limit := ModelFacingLimit()
	t.Logf("model-facing %d bytes (%.3fx), with host %d bytes (%.3fx), limit %d", p.ModelFacing, ReferenceRatio(p.ModelFacing),
		p.ModelFacingWithHost, ReferenceRatio(p.ModelFacingWithHost), limit)
	if p.ModelFacingWithHost > limit {
		t.Errorf("what a model reads with a host argument on every tool is %d bytes, over the budget of %d (%.2fx the reference's %d)",
			p.ModelFacingWithHost, limit, ModelFacingBudget, ReferenceModelFacingBytes)
	}
	// Every tool sends the host argument exactly as the projection counts
	// it, so the projection adds nothing (TestHostArgument checks each).
	if got := p.ModelFacingWithHost - p.ModelFacing; got != 0 {
		t.Errorf("host projection adds %d bytes: some tool lacks the host argument", got)
	}
}

// TestHostArgument: every tool a client can see takes the host argument,
// spelled as hostProperty (the struct tags repeat HostArgDescription).
func TestHostArgument(t *testing.T) {
	s, err := New(config.Config{Safety: config.Destructive}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := normalize(hostProperty())
	for _, tool := range s.Visible() {
		raw, err := json.Marshal(tool.mcpTool().InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]any
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatal(err)
		}
		props, _ := in["properties"].(map[string]any)
		if got, _ := props[HostArgName].(map[string]any); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: host argument %v, want %v", tool.Name, got, want)
		}
	}
}

// TestReferenceInputContract: every tool of the reference keeps, in our
// tools/list, its argument names, JSON types, defaults, enums, required list
// and closedness (the whole fixture, not only the seeds).
func TestReferenceInputContract(t *testing.T) {
	s := allToolsServer(t)
	for _, rt := range referenceTools(t) {
		t.Run(rt.Name, func(t *testing.T) {
			ours := s.tool(rt.Name)
			if ours == nil {
				t.Fatalf("no tool %s", rt.Name)
			}
			want := normalize(rt.InputSchema.(map[string]any))
			got := normalize(withoutKeywords(ours.inSchema(), docKeyword))
			compareSchemas(t, want, got)
			if strings.TrimSpace(ours.Description) == "" {
				t.Error("no description")
			}
		})
	}
}
