package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

func allToolsServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(config.Config{Safety: config.Destructive, SuppressHistory: true, PromptsAsTools: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestToolSchemasGolden pins every tool's wire definition. Run with
// UPDATE_TOOLSNAPS=1 to rewrite the files after an intended change; a
// missing file fails.
func TestToolSchemasGolden(t *testing.T) {
	s := allToolsServer(t)
	update := os.Getenv("UPDATE_TOOLSNAPS") != ""
	names := map[string]bool{}
	for _, tool := range s.All() {
		names[tool.Name+".json"] = true
		got, err := json.MarshalIndent(tool.mcpTool(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", "toolsnaps", tool.Name+".json")
		if update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden schema (run with UPDATE_TOOLSNAPS=1): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: schema differs from %s (run with UPDATE_TOOLSNAPS=1 if intended)\n got: %s", tool.Name, path, got)
		}
	}
	entries, _ := os.ReadDir(filepath.Join("testdata", "toolsnaps"))
	for _, e := range entries {
		if !names[e.Name()] {
			t.Errorf("stale golden file %s: no such tool", e.Name())
		}
	}
}

// seedCheck compares one of our schemas with a fixture built from the
// reference's published documentation.
type seedCheck struct {
	name    string
	fixture string
	schema  func(s *Server) map[string]any
}

func toolInput(name string) func(*Server) map[string]any {
	return func(s *Server) map[string]any { return s.tool(name).inSchema() }
}

func toolOutput(name string) func(*Server) map[string]any {
	return func(s *Server) map[string]any { return s.tool(name).outSchema() }
}

// TestSeedSchemas: every property of the reference keeps its name, JSON
// types, default, enum and required-ness; we add only what Additions lists.
func TestSeedSchemas(t *testing.T) {
	s := allToolsServer(t)
	checks := []seedCheck{
		{"get_pane_info output = PaneInfo", "split_window.output.json", toolOutput("get_pane_info")},
		{"PaneInfo (respawn_pane seed)", "respawn_pane.output.json", toolOutput("get_pane_info")},
	}
	checks = append(checks, extraSeedChecks...)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "seeds", c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			got := c.schema(s)
			if got == nil {
				t.Fatal("schema missing")
			}
			compareSchemas(t, want, normalize(got))
		})
	}
}

// extraSeedChecks grows as the seed tools (split_window, respawn_pane,
// run_command) are registered by their tool files.
var extraSeedChecks []seedCheck

func normalize(m map[string]any) map[string]any {
	raw, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func compareSchemas(t *testing.T, want, got map[string]any) {
	t.Helper()
	wp, _ := want["properties"].(map[string]any)
	gp, _ := got["properties"].(map[string]any)
	for name, w := range wp {
		g, ok := gp[name]
		if !ok {
			t.Errorf("property %s missing", name)
			continue
		}
		wm, gm := w.(map[string]any), g.(map[string]any)
		if a, b := typeSet(wm), typeSet(gm); !reflect.DeepEqual(a, b) {
			t.Errorf("property %s: types %v, reference has %v", name, b, a)
		}
		if !reflect.DeepEqual(wm["default"], gm["default"]) {
			t.Errorf("property %s: default %v, reference has %v", name, gm["default"], wm["default"])
		}
		if a, b := enumOf(wm), enumOf(gm); !reflect.DeepEqual(a, b) {
			t.Errorf("property %s: enum %v, reference has %v", name, b, a)
		}
	}
	for name := range gp {
		if _, ok := wp[name]; ok {
			continue
		}
		if !isAddition(name) {
			t.Errorf("property %s is not in the reference and not listed in Additions", name)
		}
	}
	if a, b := strSet(want["required"]), strSet(got["required"]); !reflect.DeepEqual(a, b) {
		t.Errorf("required %v, reference has %v", b, a)
	}
	if want["additionalProperties"] != got["additionalProperties"] {
		t.Errorf("additionalProperties %v, reference has %v", got["additionalProperties"], want["additionalProperties"])
	}
}

func isAddition(name string) bool {
	for _, a := range Additions {
		if a.Name == name {
			return true
		}
	}
	return false
}

func typeSet(m map[string]any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		s, _ := v.(map[string]any)
		if alts, ok := s["anyOf"].([]any); ok {
			for _, a := range alts {
				walk(a)
			}
			return
		}
		switch ty := s["type"].(type) {
		case string:
			if ty == "object" {
				if ap, ok := s["additionalProperties"].(map[string]any); ok {
					ty += "<" + strings.Join(typeSet(ap), "|") + ">"
				}
			}
			if ty == "array" {
				if it, ok := s["items"].(map[string]any); ok {
					ty += "<" + strings.Join(typeSet(it), "|") + ">"
				}
			}
			out = append(out, ty)
		case []any:
			for _, x := range ty {
				sub := map[string]any{}
				for k, v := range s {
					sub[k] = v
				}
				sub["type"] = x
				out = append(out, typeSet(sub)...)
			}
		}
	}
	walk(m)
	sort.Strings(out)
	return out
}

func enumOf(m map[string]any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		s, _ := v.(map[string]any)
		if alts, ok := s["anyOf"].([]any); ok {
			for _, a := range alts {
				walk(a)
			}
		}
		if e, ok := s["enum"].([]any); ok {
			for _, x := range e {
				if x != nil {
					out = append(out, x.(string))
				}
			}
		}
	}
	walk(m)
	sort.Strings(out)
	return out
}

func strSet(v any) []string {
	out := []string{}
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	sort.Strings(out)
	return out
}

// TestEveryToolTakesSocket: all tools but list_servers and the batch tools
// take socket_name and our socket_path.
func TestEveryToolTakesSocket(t *testing.T) {
	exempt := map[string]bool{"list_servers": true, "call_readonly_tools_batch": true, "call_mutating_tools_batch": true, "call_destructive_tools_batch": true,
		"list_prompts": true, "get_prompt": true}
	for _, tool := range allToolsServer(t).All() {
		props := tool.inSchema()["properties"].(map[string]any)
		_, hasName := props["socket_name"]
		_, hasPath := props["socket_path"]
		if exempt[tool.Name] {
			if hasName || hasPath {
				t.Errorf("%s must not take a socket", tool.Name)
			}
			continue
		}
		if !hasName || !hasPath {
			t.Errorf("%s: socket_name=%v socket_path=%v, want both", tool.Name, hasName, hasPath)
		}
		if tool.inSchema()["additionalProperties"] != false {
			t.Errorf("%s: input schema must forbid unknown arguments", tool.Name)
		}
	}
}

// TestAlwaysLoad: the discovery anchors carry the alwaysLoad hint.
func TestAlwaysLoad(t *testing.T) {
	want := map[string]bool{"list_panes": true, "list_windows": true, "snapshot_pane": true}
	for _, tool := range allToolsServer(t).All() {
		if tool.AlwaysLoad != want[tool.Name] {
			t.Errorf("%s: AlwaysLoad=%v", tool.Name, tool.AlwaysLoad)
		}
	}
}

// TestToolWithoutTierCannotRegister: fail closed.
func TestToolWithoutTierCannotRegister(t *testing.T) {
	for _, bad := range []Tool{
		{Name: "x", Title: "X", Description: "d", Preset: RO, Toolset: "pane"},
		{Name: "x", Title: "X", Description: "d", Tier: config.Readonly, Toolset: "pane"},
		{Name: "x", Title: "X", Description: "d", Tier: config.Readonly, Preset: RO, Toolset: "nope"},
		{Name: "x", Title: "X", Description: "d", Tier: config.Readonly, Preset: SHL, Toolset: "pane"},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("tool %+v registered", bad)
		}
	}
}
