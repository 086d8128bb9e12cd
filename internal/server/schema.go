package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Schemas are built from Go structs by reflection and carry the reference
// server's contract exactly: the same properties, JSON types, defaults and
// required lists. An optional argument is {"type":[T,"null"]} in this
// reflected schema, which every call's arguments are validated against and
// docs/tools.md shows: null is accepted wherever the reference accepts it.
// Its default is null, and an absent "default" says just that: JSON Schema's
// default is an annotation, the server applies null to an absent argument
// either way, so the reference's "default":null (15 bytes on each of ~280
// arguments) is left out. An argument with any other default carries it, and
// a required one is listed in "required". Unions of several types
// (str|int|null) stay anyOf.
//
// What tools/list advertises is advertisedInput of it: the one spelling every
// major client takes (see there).
//
// Struct tags:
//
//	json:"name"           the property name (always given)
//	desc:"..."            the description (sent: a model reads it)
//	doc:"..."             a description for docs/tools.md only, where desc
//	                      would repeat what the name, type or enum says
//	default:"<json>"      a default value; makes a non-pointer field optional
//	enum:"a,b,c"          allowed string values
//
// A pointer field is optional and nullable. A field of a type with a
// jsonSchema method uses the schema it returns. An embedded struct
// contributes its fields (shared argument groups such as the socket).

// docKeyword carries a doc tag in a schema until mcpTool strips it: the
// docs read it, tools/list never carries it.
const docKeyword = "x-doc"

// schemaer lets a type describe itself (unions such as str|int|null).
type schemaer interface{ jsonSchema() map[string]any }

var schemaerType = reflect.TypeFor[schemaer]()

// closedObject marks a nested argument struct whose schema forbids unknown
// keys (batch operations), as the top-level arguments always do.
type closedObject interface{ closedSchema() }

var closedType = reflect.TypeFor[closedObject]()

type fieldInfo struct {
	name     string
	index    []int
	required bool
	schema   map[string]any
}

func structFields(t reflect.Type) ([]fieldInfo, error) {
	var out []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			sub, err := structFields(f.Type)
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				s.index = append([]int{i}, s.index...)
				out = append(out, s)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return nil, fmt.Errorf("field %s.%s has no json name", t.Name(), f.Name)
		}
		s, nullable, err := typeSchema(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		if e := f.Tag.Get("enum"); e != "" {
			vals := []any{}
			for _, v := range strings.Split(e, ",") {
				vals = append(vals, v)
			}
			if nullable {
				vals = append(vals, nil)
			}
			s["enum"] = vals
		}
		if d := f.Tag.Get("desc"); d != "" {
			s["description"] = d
		}
		if d := f.Tag.Get("doc"); d != "" {
			s[docKeyword] = d
		}
		fi := fieldInfo{name: name, index: []int{i}, schema: s}
		if d, ok := f.Tag.Lookup("default"); ok {
			var v any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				return nil, fmt.Errorf("field %s: bad default: %w", name, err)
			}
			s["default"] = v
		} else if !nullable {
			fi.required = true
		}
		out = append(out, fi)
	}
	return out, nil
}

// typeSchema returns the schema of a Go type and whether it is nullable.
func typeSchema(t reflect.Type) (map[string]any, bool, error) {
	if t.Implements(schemaerType) {
		s := reflect.Zero(t).Interface().(schemaer).jsonSchema()
		_, hasAny := s["anyOf"]
		return s, hasAny, nil
	}
	if t.Kind() == reflect.Pointer {
		inner, _, err := typeSchema(t.Elem())
		if err != nil {
			return nil, false, err
		}
		if typ, ok := inner["type"].(string); ok {
			inner["type"] = []any{typ, "null"}
			return inner, true, nil
		}
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}, true, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, false, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, false, nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}, false, nil
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}, false, nil
	case reflect.Slice:
		items, _, err := typeSchema(t.Elem())
		if err != nil {
			return nil, false, err
		}
		return map[string]any{"type": "array", "items": items}, false, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, false, fmt.Errorf("map key must be string")
		}
		v, _, err := typeSchema(t.Elem())
		if err != nil {
			return nil, false, err
		}
		if len(v) == 0 {
			// Values of any kind: an object says so without the empty
			// subschema, which schema linters flag as a bare "true".
			return map[string]any{"type": "object"}, false, nil
		}
		return map[string]any{"type": "object", "additionalProperties": v}, false, nil
	case reflect.Struct:
		s, err := objectSchema(t, t.Implements(closedType))
		return s, false, err
	case reflect.Interface:
		return map[string]any{}, false, nil
	}
	return nil, false, fmt.Errorf("unsupported type %s", t)
}

// objectSchema builds the schema of a struct. Input schemas forbid unknown
// properties; output schemas leave that open, as the reference does.
func objectSchema(t reflect.Type, closed bool) (map[string]any, error) {
	fields, err := structFields(t)
	if err != nil {
		return nil, err
	}
	props := map[string]any{}
	var req []string
	for _, f := range fields {
		if _, dup := props[f.name]; dup {
			return nil, fmt.Errorf("%s: duplicate property %q", t.Name(), f.name)
		}
		props[f.name] = f.schema
		if f.required {
			req = append(req, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		sort.Strings(req)
		s["required"] = toAny(req)
	}
	if closed {
		s["additionalProperties"] = false
	}
	return s, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// StrOrInt is an argument that takes a string or an integer (split_window's
// size: "50%" or a number of cells).
type StrOrInt struct{ json.RawMessage }

func (StrOrInt) jsonSchema() map[string]any {
	return map[string]any{"anyOf": []any{
		map[string]any{"type": "string"}, map[string]any{"type": "integer"}, map[string]any{"type": "null"}}}
}

// StringMapArg is a mapping of strings, given as a JSON object or as a string
// holding one (the reference accepts both for environment and filters).
type StringMapArg struct{ json.RawMessage }

func (StringMapArg) jsonSchema() map[string]any {
	return map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		map[string]any{"type": "string"}, map[string]any{"type": "null"}}}
}

// Map decodes the argument. Absent or null is an empty map; a string must
// hold a JSON object of strings. Errors never echo the value.
func (a StringMapArg) Map(argName string) (map[string]string, error) {
	raw := a.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if len(raw) == 0 {
		return nil, nil // "" is no filter, as in the reference
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, causedBy(expectedf("%s must be a JSON object mapping strings to strings", argName), err)
	}
	return m, nil
}

// withoutKeywords copies a JSON schema without the given keywords in it or
// in any subschema. The names under "properties" are property names, not
// keywords, so a property called "description" keeps its place.
func withoutKeywords(schema map[string]any, drop ...string) map[string]any {
	if schema == nil {
		return nil
	}
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		if slices.Contains(drop, k) {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if k == "properties" {
				props := make(map[string]any, len(x))
				for name, p := range x {
					sub, _ := p.(map[string]any)
					props[name] = withoutKeywords(sub, drop...)
				}
				out[k] = props
			} else {
				out[k] = withoutKeywords(x, drop...)
			}
		case []any: // anyOf and the like; enum and required hold no maps
			list := make([]any, len(x))
			for i, e := range x {
				if m, ok := e.(map[string]any); ok {
					list[i] = withoutKeywords(m, drop...)
				} else {
					list[i] = e
				}
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// advertisedInput is an argument schema as tools/list sends it: the
// reflected schema without the docs-only keyword, and without the "null"
// that the reflected schema adds to every optional argument whose default is
// null (an absent argument is null anyway). Where null means something else
// than the default (max_lines: 500 by default, null for no cap), the
// argument keeps null, spelled as anyOf.
//
// Why (issue 13, researched December 2026): the reference writes a nullable
// argument {"anyOf":[{"type":T},{"type":"null"}],"default":null}, and the
// compact {"type":[T,"null"]} saves 19 bytes on each. Not every client takes
// either. Anthropic, OpenAI, VS Code and Gemini CLI (parametersJsonSchema)
// take both. Cursor's argument check compares a value's type with the whole
// type array and refuses every value ("expected string,null, got string",
// cursor/cursor#3540, #3778). Clients that map schemas onto Gemini's OpenAPI
// subset refuse type arrays with a 400 (github/copilot-cli#4623,
// google-gemini/gemini-cli#21094). anyOf everywhere would cost 6.4 KB of what
// a model reads (0.69x the reference, over the 0.6x budget). A plain
// {"type":T} for an optional argument is what every client and JSON Schema
// dialect takes, costs nothing, and a model that omits the argument gets the
// same null. The server still accepts an explicit null (validation uses the
// reflected schema), so a caller written for the reference works unchanged.
// Result schemas keep [T,"null"]: results are validated by SDKs, which take
// JSON Schema 2020-12, and no client maps them onto a function declaration
// (anyOf there would add ~7.6 KB to tools/list). The MCP Inspector's
// portability lint (inspector 2.12.0, --cli --method tools/list --strict,
// destructive tier) went from 762 warnings (341 on input schemas) to 418,
// none on an input schema; the rest are result-schema type arrays.
func advertisedInput(in map[string]any) map[string]any {
	return portableNulls(withoutKeywords(in, docKeyword))
}

// portableNulls rewrites s in place (a copy made by withoutKeywords) as
// advertisedInput describes, in s and every subschema.
func portableNulls(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if m, ok := p.(map[string]any); ok {
				props[name] = portableNulls(m)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			s[k] = portableNulls(m)
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for i, a := range alts {
			if m, ok := a.(map[string]any); ok {
				alts[i] = portableNulls(m)
			}
		}
	}
	d, hasDefault := s["default"]
	nullIsDefault := !hasDefault || d == nil
	if types, ok := s["type"].([]any); ok && slices.Contains(types, any("null")) {
		rest := slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
		if nullIsDefault {
			s["type"] = single(rest)
			dropNullEnum(s)
			return s
		}
		// null means something of its own: keep it, as anyOf.
		branch := map[string]any{}
		for k, v := range s {
			if k != "description" && k != "default" && k != "title" {
				branch[k] = v
				delete(s, k)
			}
		}
		branch["type"] = single(rest)
		dropNullEnum(branch)
		s["anyOf"] = []any{branch, map[string]any{"type": "null"}}
		return s
	}
	if alts, ok := s["anyOf"].([]any); ok && nullIsDefault {
		rest := slices.DeleteFunc(slices.Clone(alts), func(a any) bool {
			m, ok := a.(map[string]any)
			return ok && len(m) == 1 && m["type"] == "null"
		})
		if len(rest) == 1 {
			delete(s, "anyOf")
			for k, v := range rest[0].(map[string]any) {
				s[k] = v
			}
		} else {
			s["anyOf"] = rest
		}
	}
	return s
}

// single is a type list as the "type" keyword spells it: one type bare.
func single(types []any) any {
	if len(types) == 1 {
		return types[0]
	}
	return types
}

// dropNullEnum removes null from an enum whose type no longer admits it.
func dropNullEnum(s map[string]any) {
	if e, ok := s["enum"].([]any); ok {
		s["enum"] = slices.DeleteFunc(slices.Clone(e), func(v any) bool { return v == nil })
	}
}
