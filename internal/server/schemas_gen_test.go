package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// TestGeneratedSchemas fails when schemas_gen.go no longer matches what
// reflection gives, so a changed argument, description or result field can
// never be listed with its old schema.
func TestGeneratedSchemas(t *testing.T) {
	want, err := GeneratedSchemasSource()
	if err != nil {
		t.Fatal(err)
	}
	if formatted, err := format.Source(want); err != nil || !bytes.Equal(formatted, want) {
		t.Fatalf("GeneratedSchemasSource is not gofmt-formatted (%v)", err)
	}
	got, err := os.ReadFile(filepath.Base(SchemasGenPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `go generate ./internal/server` (or `go run ./cmd/tmux-mcp docs`) and commit it", SchemasGenPath)
	}
	for _, tool := range append(allTools(), promptTools()...) {
		if _, _, ok := generatedSchemas(tool.Name); !ok {
			t.Errorf("%s: no generated schema: run `go generate ./internal/server`", tool.Name)
		}
	}
}

// TestListedSchemasAreGenerated checks what a client sees: tools/list over
// a real SDK session lists every tool with exactly the reflected schemas
// (which validation uses), for the default configuration served from the
// generated constants and for a non-default one from reflection.
func TestListedSchemasAreGenerated(t *testing.T) {
	for _, suppress := range []bool{true, false} {
		t.Run(fmt.Sprintf("suppress_history=%v", suppress), func(t *testing.T) {
			cfg := config.Config{Safety: config.Destructive, SuppressHistory: suppress, PromptsAsTools: true}
			s, err := New(cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ct, st := mcp.NewInMemoryTransports()
			ss, err := s.MCP().Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := New(cfg, Options{}) // a second table, never listed
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != len(ref.Visible()) {
				t.Fatalf("listed %d tools, want %d", len(res.Tools), len(ref.Visible()))
			}
			for i, lt := range res.Tools {
				rt := ref.Visible()[i]
				if lt.Name != rt.Name {
					t.Fatalf("tool %d is %s, want %s", i, lt.Name, rt.Name)
				}
				sameJSON(t, rt.Name+" input", lt.InputSchema, advertisedInput(rt.inSchema()))
				sameJSON(t, rt.Name+" output", lt.OutputSchema, rt.outSchema())
			}
		})
	}
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	g, _ = json.Marshal(gv) // canonical: sorted keys
	w, _ = json.Marshal(wv)
	if !bytes.Equal(g, w) {
		t.Errorf("%s: listed\n%s\nwant\n%s", what, g, w)
	}
}

// TestSDKAcceptsSchemas runs every tool's real schemas through the SDK's
// own AddTool checks, which the server skips at start-up (see MCP): what
// the SDK would refuse at run time fails here, at build time.
func TestSDKAcceptsSchemas(t *testing.T) {
	s := allToolsServer(t)
	ms := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	for _, tool := range s.All() {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: the SDK refuses its schemas: %v", tool.Name, r)
				}
			}()
			ms.AddTool(&mcp.Tool{Name: tool.Name, InputSchema: tool.inSchema(), OutputSchema: tool.outSchema()},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		}()
	}
}
