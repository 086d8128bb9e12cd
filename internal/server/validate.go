package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// validateValue checks v (decoded with UseNumber) against a schema built by
// schema.go. It supports exactly the keywords those schemas use and reports
// what was expected, never the value that was given, so a secret passed in
// the wrong place does not come back in an error.
func validateValue(s map[string]any, v any) (string, bool) {
	if alts, ok := s["anyOf"].([]any); ok {
		var exp []string
		for _, a := range alts {
			msg, ok := validateValue(a.(map[string]any), v)
			if ok {
				return "", true
			}
			exp = append(exp, msg)
		}
		return strings.Join(exp, " or "), false
	}
	if types, ok := s["type"].([]any); ok {
		// {"type": [T, "null"]}: valid when it validates as any one of them.
		var exp []string
		for _, t := range types {
			alt := map[string]any{}
			for k, x := range s {
				alt[k] = x
			}
			alt["type"] = t
			msg, ok := validateValue(alt, v)
			if ok {
				return "", true
			}
			exp = append(exp, msg)
		}
		return strings.Join(exp, " or "), false
	}
	typ, _ := s["type"].(string)
	if enum, ok := s["enum"].([]any); ok && typ != "null" {
		str, isStr := v.(string)
		for _, e := range enum {
			if isStr && e == str {
				return "", true
			}
		}
		var names []string
		for _, e := range enum {
			if e != nil {
				names = append(names, fmt.Sprintf("%q", e))
			}
		}
		return "one of " + strings.Join(names, ", "), false
	}
	switch typ {
	case "":
		return "", true
	case "null":
		return "null", v == nil
	case "string":
		_, ok := v.(string)
		return "string", ok
	case "boolean":
		_, ok := v.(bool)
		return "boolean", ok
	case "number":
		_, ok := v.(json.Number)
		return "number", ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return "integer", false
		}
		_, err := n.Int64()
		return "integer", err == nil
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return "array", false
		}
		items, _ := s["items"].(map[string]any)
		for _, it := range arr {
			if msg, ok := validateValue(items, it); !ok {
				return "array of " + msg, false
			}
		}
		return "", true
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return "object", false
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for _, val := range obj {
				if msg, ok := validateValue(ap, val); !ok {
					return "object of " + msg, false
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, ps := range props {
			if val, present := obj[k]; present {
				if msg, ok := validateValue(ps.(map[string]any), val); !ok {
					return fmt.Sprintf("object whose %q is %s", k, msg), false
				}
			}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, present := obj[r.(string)]; !present {
					return fmt.Sprintf("object with %q", r), false
				}
			}
		}
		if s["additionalProperties"] == false {
			for k := range obj {
				if _, known := props[k]; !known {
					return "object without unknown keys", false
				}
			}
		}
		return "", true
	}
	return typ, false
}

// checkArguments validates tool arguments against an input schema and
// applies defaults. It returns the arguments as a map ready to decode.
func checkArguments(title string, schema map[string]any, raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		v, err := decodeObject(raw, true)
		if err != nil {
			return nil, &ToolError{Msg: "arguments are not valid JSON", Type: "ValidationError", Expected: true}
		}
		// Lax mode, as the reference validates (coerce.go), on the value
		// already decoded here rather than on a second decode of raw.
		if out, changed := coerceValue(schema, v); changed {
			v = out
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, &ToolError{Msg: "arguments must be a JSON object", Type: "ValidationError", Expected: true}
		}
		args = obj
	}
	props, _ := schema["properties"].(map[string]any)
	var unknown, problems []string
	for k := range args {
		if _, ok := props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		problems = append(problems, fmt.Sprintf("%s\n  Extra inputs are not permitted [type=extra_forbidden]", k))
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			required[r.(string)] = true
		}
	}
	for _, k := range names {
		ps := props[k].(map[string]any)
		v, present := args[k]
		if !present {
			if required[k] {
				problems = append(problems, fmt.Sprintf("%s\n  Field required [type=missing]", k))
			} else if d, ok := ps["default"]; ok {
				args[k] = d
			}
			continue
		}
		if msg, ok := validateValue(ps, v); !ok {
			problems = append(problems, fmt.Sprintf("%s\n  Input should be %s [type=type_error]", k, msg))
		}
	}
	if len(problems) == 0 {
		return args, nil
	}
	noun := "errors"
	if len(problems) == 1 {
		noun = "error"
	}
	te := &ToolError{
		Msg:      fmt.Sprintf("%d validation %s for %s\n%s", len(problems), noun, title, strings.Join(problems, "\n")),
		Type:     "ValidationError",
		Expected: true,
	}
	if len(unknown) > 0 {
		te.Suggestion = "Remove or correct the unrecognized argument(s): " + strings.Join(unknown, ", ") + "."
	}
	return nil, te
}

// nulAllowed lists, per tool, the top-level arguments that may hold NUL
// bytes: their text never reaches a tmux argv or a control-mode command line
// with a NUL in it (loadCommand sends content holding a NUL through a
// temporary file and load-buffer; on a remote host it is streamed to
// load-buffer's stdin). Every other string argument, nested ones
// included, is refused with a NUL: tmux cannot take one in an argument, and
// without this check the agent saw "Unexpected error: ... NUL byte" or a
// fork/exec "invalid argument" instead of the field it got wrong.
var nulAllowed = map[string]map[string]bool{
	"load_buffer": {"content": true},
	"paste_text":  {"text": true},
}

// checkCall is the check every call passes after its arguments validated
// against the schema and before its handler runs (safeCall): no NUL byte
// where tmux would get one, and a socket selection tmux may be given.
// Nested calls of batch tools pass it on their own (invoke), with their own
// tool's exemptions, so a batch skips its operations' arguments.
func (s *Server) checkCall(t *Tool, args map[string]any) error {
	props, _ := t.inSchema()["properties"].(map[string]any)
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if nulAllowed[t.Name][k] {
			continue
		}
		v := args[k]
		if t.Toolset == "batch" && k == "operations" {
			v = batchToolNames(v)
		}
		ps, _ := props[k].(map[string]any)
		if where, ok := nulIn(ps, v, k); ok {
			return &ToolError{Msg: where + ": must not contain a NUL byte", Type: "ValidationError", Expected: true}
		}
	}
	_, hasName := props["socket_name"]
	_, hasPath := props["socket_path"]
	if !hasName && !hasPath {
		return nil
	}
	var a SocketArgs
	if v, ok := args["socket_name"].(string); ok {
		a.SocketName = &v
	}
	if v, ok := args["socket_path"].(string); ok {
		a.SocketPath = &v
	}
	if v, ok := args[HostArgName].(string); ok && v != "" {
		return checkRemoteSocket(a)
	}
	return s.checkSocket(a)
}

// batchToolNames keeps only the tool names of batch operations: their
// arguments are checked by the nested call.
func batchToolNames(v any) any {
	ops, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(ops))
	for _, op := range ops {
		if m, ok := op.(map[string]any); ok {
			out = append(out, map[string]any{"tool": m["tool"]})
		}
	}
	return out
}

// nulIn finds a NUL byte in v (decoded JSON) and returns where: path, with
// [i] for array items and .key for object members. A string where the
// schema also allows an object (StringMapArg) is looked into as the JSON
// object it will be decoded as.
func nulIn(schema map[string]any, v any, path string) (string, bool) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return path, true
		}
		if obj := alternative(schema, "object"); obj != nil && strings.HasPrefix(strings.TrimSpace(x), "{") {
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				return nulIn(obj, inner, path)
			}
		}
	case []any:
		items, _ := alternative(schema, "array")["items"].(map[string]any)
		for i, it := range x {
			if where, ok := nulIn(items, it, fmt.Sprintf("%s[%d]", path, i)); ok {
				return where, true
			}
		}
	case map[string]any:
		obj := alternative(schema, "object")
		props, _ := obj["properties"].(map[string]any)
		extra, _ := obj["additionalProperties"].(map[string]any)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.IndexByte(k, 0) >= 0 {
				return path + " (a key)", true
			}
			sub, _ := props[k].(map[string]any)
			if sub == nil {
				sub = extra
			}
			if where, ok := nulIn(sub, x[k], path+"."+k); ok {
				return where, true
			}
		}
	}
	return "", false
}

// alternative returns the part of a schema that describes values of JSON
// type typ: the schema itself, or its anyOf branch of that type; nil when
// the schema does not allow typ (or is nil).
func alternative(schema map[string]any, typ string) map[string]any {
	if schema == nil {
		return nil
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && m["type"] == typ {
				return m
			}
		}
		return nil
	}
	switch t := schema["type"].(type) {
	case string:
		if t == typ {
			return schema
		}
	case []any:
		for _, x := range t {
			if x == typ {
				return schema
			}
		}
	}
	return nil
}
