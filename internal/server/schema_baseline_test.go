package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// outputBaselinePath holds every tool's output schema as main listed it on
// 3 December 2026, before the schemas were changed for the TypeScript
// client's cold start (issue 22 goal 4). It is kept, not regenerated: the
// schemas of today may spell a fact differently or add facts, never lose
// one (TestOutputSchemasKeepBaseline).
var outputBaselinePath = filepath.Join("testdata", "output_schemas_baseline.json")

// schemaFacts lists what an output schema promises, one fact per line,
// independent of how the schema spells it: each property path, the JSON
// types allowed at each path, each enum value and each required entry.
// {"anyOf":[{"type":"string"},{"type":"null"}]} and {"type":["string",
// "null"]} give the same facts; an $id, which names a schema and
// constrains nothing, gives none. Paths use "/" between property names,
// "[]" for array items and "{}" for the values of additionalProperties.
func schemaFacts(s map[string]any) []string {
	set := map[string]bool{}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		var branches []map[string]any
		for _, k := range []string{"anyOf", "oneOf"} {
			if alts, ok := s[k].([]any); ok {
				for _, a := range alts {
					if m, ok := a.(map[string]any); ok {
						branches = append(branches, m)
					}
				}
			}
		}
		if len(branches) == 0 {
			branches = []map[string]any{s}
		} else {
			// Keywords beside anyOf apply to every branch.
			for i, b := range branches {
				merged := maps.Clone(s)
				delete(merged, "anyOf")
				delete(merged, "oneOf")
				maps.Copy(merged, b)
				branches[i] = merged
			}
		}
		for _, b := range branches {
			switch ty := b["type"].(type) {
			case string:
				set[fmt.Sprintf("type %s %s", path, ty)] = true
			case []any:
				for _, x := range ty {
					set[fmt.Sprintf("type %s %v", path, x)] = true
				}
			}
			if e, ok := b["enum"].([]any); ok {
				for _, v := range e {
					raw, _ := json.Marshal(v)
					set[fmt.Sprintf("enum %s %s", path, raw)] = true
				}
			}
			if req, ok := b["required"].([]any); ok {
				for _, r := range req {
					set[fmt.Sprintf("required %s %v", path, r)] = true
				}
			}
			if props, ok := b["properties"].(map[string]any); ok {
				for name, p := range props {
					set[fmt.Sprintf("property %s/%s", path, name)] = true
					if m, ok := p.(map[string]any); ok {
						walk(path+"/"+name, m)
					}
				}
			}
			if it, ok := b["items"].(map[string]any); ok {
				walk(path+"[]", it)
			}
			if ap, ok := b["additionalProperties"].(map[string]any); ok {
				walk(path+"{}", ap)
			}
		}
	}
	walk("", s)
	facts := slices.Collect(maps.Keys(set))
	sort.Strings(facts)
	return facts
}

// lostFacts is what baseline promises that now does not.
func lostFacts(baseline, now map[string]any) []string {
	have := map[string]bool{}
	for _, f := range schemaFacts(now) {
		have[f] = true
	}
	var lost []string
	for _, f := range schemaFacts(baseline) {
		if !have[f] {
			lost = append(lost, f)
		}
	}
	return lost
}

// TestSchemaFacts: the comparison sees a removed property, type, enum value
// or required entry, and sees through spellings that say the same.
func TestSchemaFacts(t *testing.T) {
	const base = `{"type":"object","required":["id","state"],"properties":{
		"id":{"type":"string"},
		"n":{"type":["integer","null"]},
		"state":{"type":"string","enum":["on","off"]},
		"items":{"type":"array","items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}}}},
		"vars":{"type":"object","additionalProperties":{"anyOf":[{"type":"string"},{"type":"boolean"}]}}}}`
	for _, c := range []struct {
		name string
		now  string
		lost []string
	}{
		{"unchanged", base, nil},
		{"type list for anyOf, and an $id", `{"$id":"tmux-mcp:00000000","type":"object","required":["state","id"],"properties":{
			"id":{"type":"string"},
			"n":{"anyOf":[{"type":"integer"},{"type":"null"}]},
			"state":{"type":"string","enum":["off","on"]},
			"items":{"type":"array","items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}}}},
			"vars":{"type":"object","additionalProperties":{"type":["string","boolean"]}}}}`, nil},
		{"a property added", strings.Replace(base, `"id":{"type":"string"},`, `"id":{"type":"string"},"extra":{"type":"string"},`, 1), nil},
		{"a property removed", strings.Replace(base, `"id":{"type":"string"},`, ``, 1),
			[]string{"property /id", "type /id string"}},
		{"a nested property removed", strings.Replace(base, `"properties":{"k":{"type":"string"}}`, `"properties":{}`, 1),
			[]string{"property /items[]/k", "type /items[]/k string"}},
		{"null removed from a type", strings.Replace(base, `["integer","null"]`, `"integer"`, 1), []string{"type /n null"}},
		{"a type changed", strings.Replace(base, `"id":{"type":"string"}`, `"id":{"type":"integer"}`, 1), []string{"type /id string"}},
		{"a branch of anyOf removed", strings.Replace(base, `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`, `{"type":"string"}`, 1),
			[]string{"type /vars{} boolean"}},
		{"an enum value removed", strings.Replace(base, `["on","off"]`, `["on"]`, 1), []string{`enum /state "off"`}},
		{"a required entry removed", strings.Replace(base, `"required":["id","state"]`, `"required":["state"]`, 1), []string{"required  id"}},
		{"a nested required entry removed", strings.Replace(base, `"required":["k"]`, `"required":[]`, 1), []string{"required /items[] k"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b, n map[string]any
			if err := json.Unmarshal([]byte(base), &b); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.now), &n); err != nil {
				t.Fatal(err)
			}
			if got := lostFacts(b, n); !slices.Equal(got, c.lost) {
				t.Errorf("lost %q, want %q", got, c.lost)
			}
		})
	}
}

// TestOutputSchemasKeepBaseline: every tool of the baseline still has an
// output schema, and it still promises everything the baseline's did: no
// property, type, enum value or required entry removed (TestSchemaFacts
// shows the comparison catching each). The schemas compared are the ones
// tools/list sends.
func TestOutputSchemasKeepBaseline(t *testing.T) {
	raw, err := os.ReadFile(outputBaselinePath)
	if err != nil {
		t.Fatal(err)
	}
	var baseline map[string]map[string]any
	if err := json.Unmarshal(raw, &baseline); err != nil {
		t.Fatal(err)
	}
	if len(baseline) < 50 {
		t.Fatalf("the baseline holds %d schemas", len(baseline))
	}
	s := allToolsServer(t)
	for name, want := range baseline {
		tool := s.tool(name)
		if tool == nil {
			t.Errorf("%s: no such tool any more", name)
			continue
		}
		got := normalize(listedOutput(t, tool))
		if got == nil {
			t.Errorf("%s: no output schema", name)
			continue
		}
		if lost := lostFacts(want, got); len(lost) > 0 {
			t.Errorf("%s: the output schema no longer promises %q", name, lost)
		}
	}
}

// listedOutput is a tool's output schema as tools/list sends it.
func listedOutput(t *testing.T, tool *Tool) map[string]any {
	t.Helper()
	raw, err := json.Marshal(tool.mcpTool().OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
