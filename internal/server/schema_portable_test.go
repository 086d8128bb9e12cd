package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPortableNulls(t *testing.T) {
	tests := []struct {
		name      string
		in, want  string
		unchanged bool
	}{
		{name: "optional, default null", in: `{"type":["string","null"],"description":"d"}`, want: `{"type":"string","description":"d"}`},
		{name: "explicit default null", in: `{"type":["integer","null"],"default":null}`, want: `{"type":"integer","default":null}`},
		{name: "enum loses null", in: `{"type":["string","null"],"enum":["a","b",null]}`, want: `{"type":"string","enum":["a","b"]}`},
		{name: "null means something else than the default", in: `{"type":["integer","null"],"default":500,"description":"null: no cap."}`,
			want: `{"anyOf":[{"type":"integer"},{"type":"null"}],"default":500,"description":"null: no cap."}`},
		{name: "union, default null", in: `{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`, want: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`},
		{name: "union of one besides null is lifted", in: `{"anyOf":[{"type":"object","additionalProperties":{"type":"string"}},{"type":"null"}],"description":"d"}`,
			want: `{"type":"object","additionalProperties":{"type":"string"},"description":"d"}`},
		{name: "required stays", in: `{"type":"string"}`, want: `{"type":"string"}`},
		{name: "nested", in: `{"type":"object","properties":{"ops":{"type":"array","items":{"type":"object","properties":{"k":{"type":["string","null"]}}}}}}`,
			want: `{"type":"object","properties":{"ops":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in, want map[string]any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if got := portableNulls(in); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}

// TestAdvertisedInputIsPortable: what tools/list advertises has no type
// array anywhere (Cursor refuses every value of such a property, Gemini's
// OpenAPI subset refuses the schema), admits null exactly where null means
// something else than the argument's default, and every argument that no
// longer advertises null still takes an explicit null, as the reference
// does.
func TestAdvertisedInputIsPortable(t *testing.T) {
	for _, tool := range append(allTools(), promptTools()...) {
		reflected := tool.inSchema()
		advertised := advertisedInput(reflected)
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch x := v.(type) {
			case map[string]any:
				if _, ok := x["type"].([]any); ok {
					t.Errorf("%s%s: a type array: %v", tool.Name, path, x["type"])
				}
				for k, e := range x {
					walk(path+"/"+k, e)
				}
			case []any:
				for _, e := range x {
					walk(path, e)
				}
			}
		}
		walk("", advertised)
		props, _ := advertised["properties"].(map[string]any)
		for name, p := range reflected["properties"].(map[string]any) {
			rp := p.(map[string]any)
			if !admitsNull(rp) {
				continue
			}
			d, hasDefault := rp["default"]
			wantNull := hasDefault && d != nil
			if got := admitsNull(props[name].(map[string]any)); got != wantNull {
				t.Errorf("%s.%s: advertised admits null = %v, want %v (default %v)", tool.Name, name, got, wantNull, d)
			}
			if _, err := checkArguments(tool.Title, reflected, json.RawMessage(`{"`+name+`":null}`)); err != nil &&
				strings.Contains(err.Error(), name+"\n") {
				t.Errorf("%s.%s: an explicit null is refused: %v", tool.Name, name, err)
			}
		}
	}
}

// admitsNull reports whether a property schema lets a value be null.
func admitsNull(s map[string]any) bool {
	if types, ok := s["type"].([]any); ok && slices.Contains(types, any("null")) {
		return true
	}
	if s["type"] == "null" {
		return true
	}
	alts, _ := s["anyOf"].([]any)
	return slices.ContainsFunc(alts, func(a any) bool {
		m, _ := a.(map[string]any)
		return admitsNull(m)
	})
}
