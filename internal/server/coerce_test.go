package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// probeSchemas are the argument schemas the coercion probe exercised, as
// our tools advertise them (see the toolsnaps named in each comment).
var probeSchemas = map[string]map[string]any{
	"boolean":                             {"type": "boolean"},                // send_keys enter, search_panes regex
	"boolean (send_keys_batch operation)": {"type": "boolean"},                // operations[].enter
	"integer":                             {"type": "integer"},                // search_panes offset
	"integer|null":                        {"type": []any{"integer", "null"}}, // search_panes limit, resize_pane height
	"number":                              {"type": "number"},                 // wait_for_channel timeout
	"string":                              {"type": "string"},                 // set_option value
	"string|null":                         {"type": []any{"string", "null"}},  // get_pane_info pane_id
	"enum":                                {"type": "string", "enum": []any{"stop", "continue"}},
	"enum|null":                           {"type": []any{"string", "null"}, "enum": []any{"server", "session", "window", "pane", nil}},
	"array<string>|null":                  {"type": []any{"array", "null"}, "items": map[string]any{"type": "string"}},
	"object|string|null": {"anyOf": []any{map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		map[string]any{"type": "string"}, map[string]any{"type": "null"}}},
}

func useNumber(t *testing.T, v any) any {
	t.Helper()
	raw, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCoercionMatchesReference replays the probe of the running reference
// (testdata/reference/coercion.json: each argument type the contract uses,
// fed strings, numbers, booleans, nulls, lists and objects): what the
// reference accepted we accept, with the same value; what it refused we
// refuse. The one deliberate exception: "inf" and "nan" for a number, which
// the reference parses and its tools then refuse, are refused here at once.
func TestCoercionMatchesReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", "coercion.json"))
	if err != nil {
		t.Fatal(err)
	}
	var probe struct {
		Cases []struct {
			Type     string `json:"type"`
			Input    any    `json:"input"`
			Accepted bool   `json:"accepted"`
			Value    any    `json:"value"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		t.Fatal(err)
	}
	if len(probe.Cases) < 500 {
		t.Fatalf("only %d probe cases", len(probe.Cases))
	}
	for _, c := range probe.Cases {
		s := probeSchemas[c.Type]
		if s == nil {
			t.Fatalf("no schema for %q", c.Type)
		}
		in := useNumber(t, c.Input)
		out, _ := coerceValue(s, in)
		_, accepted := validateValue(s, out)
		want := c.Accepted
		if str, ok := c.Input.(string); ok && c.Type == "number" {
			switch strings.ToLower(strings.TrimSpace(strings.TrimLeft(str, "+-"))) {
			case "inf", "infinity", "nan":
				want = false
			}
		}
		if accepted != want {
			t.Errorf("%s %#v: accepted %v, reference %v (coerced to %#v)", c.Type, c.Input, accepted, c.Accepted, out)
			continue
		}
		if !accepted || c.Value == nil {
			continue
		}
		switch c.Type {
		case "number":
			f, _ := strconv.ParseFloat(c.Value.(string), 64)
			got, _ := out.(json.Number).Float64()
			if f < 30 && got != f { // the reference printed the clamped timeout
				t.Errorf("number %#v: %v, reference %v", c.Input, got, f)
			}
		case "integer", "integer|null":
			if n, ok := out.(json.Number); !ok || string(n) != strconv.Itoa(int(c.Value.(float64))) {
				t.Errorf("%s %#v: %#v, reference %v", c.Type, c.Input, out, c.Value)
			}
		default:
			if out != c.Value {
				t.Errorf("%s %#v: %#v, reference %#v", c.Type, c.Input, out, c.Value)
			}
		}
	}
}

// TestCoerceArguments: the whole-arguments entry point rewrites only what
// needs it, recurses into batch operations, and leaves strictly valid or
// unparseable input byte for byte alone.
func TestCoerceArguments(t *testing.T) {
	e := newEnv(t)
	tool := func(name string) map[string]any { return e.srv.tool(name).inSchema() }
	for _, c := range []struct {
		tool, in, want string
	}{
		{"send_keys", `{"keys":"ls","enter":"yes"}`, `{"enter":true,"keys":"ls"}`},
		{"capture_pane", `{"start":"0","end":"1"}`, `{"end":1,"start":0}`},
		{"capture_pane", `{"start":0,"end":1}`, `{"start":0,"end":1}`},
		{"send_keys_batch", `{"operations":[{"keys":"a","enter":"no","literal":1}],"timeout":"2.5"}`,
			`{"operations":[{"enter":false,"keys":"a","literal":true}],"timeout":2.5}`},
		{"send_keys", `{"keys":5}`, `{"keys":5}`},
		{"send_keys", `{"keys":"x","enter":"maybe"}`, `{"keys":"x","enter":"maybe"}`},
		{"send_keys", `not json`, `not json`},
	} {
		got := string(coerceArguments(tool(c.tool), json.RawMessage(c.in)))
		if got != c.want {
			t.Errorf("%s %s: %s, want %s", c.tool, c.in, got, c.want)
		}
	}
}

// TestLaxArgumentsOverMCP: the coercion applies to real calls, at top level
// and inside a batch's nested calls, as the reference accepts them.
func TestLaxArgumentsOverMCP(t *testing.T) {
	e := newEnv(t)
	e.ok("send_keys", map[string]any{"keys": "echo lax", "enter": "yes", "pane_id": "%0"}, nil)
	var out string
	e.ok("capture_pane", map[string]any{"pane_id": "%0", "start": "0", "end": "1"}, &out)
	var batch struct {
		Succeeded int `json:"succeeded"`
	}
	e.ok("call_readonly_tools_batch", map[string]any{"operations": []any{
		map[string]any{"tool": "capture_pane", "arguments": map[string]any{"pane_id": "%0", "start": "0", "end": 1.0}},
		map[string]any{"tool": "show_option", "arguments": map[string]any{"option": "mouse", "global_": "1"}},
	}}, &batch)
	if batch.Succeeded != 2 {
		t.Errorf("batch with lax arguments: %+v", batch)
	}
	msg, _ := e.fail("send_keys", map[string]any{"keys": "x", "enter": "maybe", "pane_id": "%0"})
	if !strings.Contains(msg, "validation error") {
		t.Errorf("enter=maybe: %q", msg)
	}
}
