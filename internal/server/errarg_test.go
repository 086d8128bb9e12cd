package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolErrorBytes is the most a tool error may take when it carries no
// output the caller asked for: an agent pays for every byte in its context.
const maxToolErrorBytes = 2048

// hugeShapes are the argument values no error may echo whole: each far
// beyond maxToolErrorBytes. The first is 1 MiB (hugeSize); the others are
// a few KiB, enough to show an echo, in shapes that an echo escapes or
// splits: many lines, control characters and NUL, invalid UTF-8 (JSON
// carries none: the encoder turns it into U+FFFD, as a client's would, so
// it reaches the server as replacement characters), a regular expression
// that does not compile (its error quotes it).
func hugeShapes() []struct{ name, value string } {
	n := hugeSize()
	return []struct{ name, value string }{
		{fmt.Sprintf("%dKiB", n>>10), strings.Repeat("A", n)},
		{"lines", strings.Repeat("line of text\n", 4<<10/13)},
		{"control", strings.Repeat("\x1b[2J\x07\x00\r\x7f\x1b]0;t\x07", 4<<10/14)},
		{"invalid-utf8", strings.Repeat("\xff\xfe\xc3", 4<<10/3)},
		{"bad-regex", "(" + strings.Repeat("a|", 2<<10)},
	}
}

// hugeSize is 1 MiB, the size the fuzz found echoed; 64 KiB under the race
// detector, which makes every pass over a 1 MiB argument (the SDK's and
// our decoding, validation, the tmux command) about ten times slower: 560
// such calls took 7 minutes. 64 KiB is still 32 times the bound, so any
// echo fails the same way; no error path depends on the size past tmux's
// command limit, whose error names no argument (runner.go).
func hugeSize() int {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return 64 << 10
			}
		}
	}
	return 1 << 20
}

// plausible are values of arguments that a call needs besides the one
// under test, so that the huge value gets past them to the code that reads
// it; an argument not named here gets its enum's first value or "x".
var plausible = map[string]any{
	"pane_id": "%0", "source_pane_id": "%0", "target_pane_id": "%0", "window_id": "@0", "session_id": "$0",
	"session_name": "main", "window_index": "0", "option": "status", "hook_name": "after-new-window",
	"format_string": "#{pane_id}", "layout": "tiled", "corner": "top-left", "name": "FOO", "value": "1",
	"channel": "errarg-test", "buffer_name": "x", "keys": "", "command": "true", "timeout": 0.5,
	"text": "", "content": "x", "new_name": "renamed", "title": "t", "pattern": "x", "run_id": "x",
}

// sharedArgs are the arguments nearly every tool takes, read by the same
// code for all of them (bindHost, checkSocket, Call.Socket) before the
// tool's own: each gets the 1 MiB value on every tool, and the other
// shapes on one (list_sessions), which keeps the sweep's thousands of calls
// down by a third.
var sharedArgs = map[string]bool{HostArgName: true, "socket_name": true, "socket_path": true}

// TestNoErrorEchoesHugeArgument (issue 21 item 5): every registered tool,
// with each of its string arguments (and each string inside an array or
// object argument) set to a huge value of each shape, answers no error
// larger than maxToolErrorBytes. The tools come from the registry, so a
// tool added later is covered without touching this test.
func TestNoErrorEchoesHugeArgument(t *testing.T) {
	if testing.Short() {
		t.Skip("sends ~1 MiB arguments to every tool")
	}
	shapes := hugeShapes()
	var e *env
	fresh := func() { e = newEnv(t) }
	fresh()
	largest, calls := 0, 0
	var where string
	check := func(tool, arg, shape string, args map[string]any) {
		t.Helper()
		calls++
		res := e.call(tool, args)
		for _, msg := range toolErrors(res) {
			if len(msg) > largest {
				largest, where = len(msg), tool+"."+arg+"/"+shape
			}
			if len(msg) > maxToolErrorBytes {
				t.Errorf("%s with %s = %s value: %d-byte error: %.300q…", tool, arg, shape, len(msg), msg)
			}
		}
		if !res.IsError {
			// It changed something (a renamed session, a killed pane):
			// the next call gets a fresh server, so its huge value
			// reaches the same code as the others'.
			fresh()
		}
	}
	tools := e.srv.All()
	if len(tools) < 50 {
		t.Fatalf("only %d tools registered", len(tools))
	}
	for _, tool := range tools {
		props, _ := tool.inSchema()["properties"].(map[string]any)
		base := baseArgs(tool)
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		})
		if tool.Name == "list_sessions" {
			// Argument names are echoed too: an unknown huge one, and
			// thousands of unknown short ones. Every tool's arguments
			// are checked by the same code (checkArguments) before it
			// runs: one tool shows it.
			check(tool.Name, "(unknown key)", shapes[0].name, maps2(base, shapes[0].value, 1))
			many := maps2(base)
			for i := range 5000 {
				many[fmt.Sprintf("unknown_%d", i)] = 1
			}
			check(tool.Name, "(5000 unknown keys)", "", many)
		}
		for _, arg := range names {
			p, _ := props[arg].(map[string]any)
			for i, sh := range shapes {
				if i > 0 && sharedArgs[arg] && tool.Name != "list_sessions" {
					continue
				}
				for _, v := range hugeValues(tool, p, sh.value) {
					args := maps2(base)
					args[arg] = v
					if _, ok := props["regex"]; ok && sh.name == "bad-regex" {
						args["regex"] = true // compiled as written
					}
					check(tool.Name, arg, sh.name, args)
				}
			}
		}
	}
	t.Logf("%d calls; largest tool error %d bytes (%s)", calls, largest, where)
}

// toolErrors is the error text of a result: its own when it is an error,
// and each failed operation's of a batch.
func toolErrors(res *mcp.CallToolResult) []string {
	if res.IsError {
		return []string{text(res)}
	}
	var batch ToolCallBatchResult
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &batch) != nil {
		return nil
	}
	var out []string
	for _, r := range batch.Results {
		if r.Error != nil {
			out = append(out, *r.Error)
		}
	}
	return out
}

// baseArgs are a tool's required arguments with plausible values.
func baseArgs(t *Tool) map[string]any {
	in := t.inSchema()
	props, _ := in["properties"].(map[string]any)
	out := requiredOf(in, props)
	if _, ok := props["timeout"]; ok {
		out["timeout"] = 0.5 // a wait the huge value does not stop ends soon
	}
	return out
}

// requiredOf is an object schema's required properties with plausible
// values.
func requiredOf(in, props map[string]any) map[string]any {
	out := map[string]any{}
	req, _ := in["required"].([]any)
	for _, name := range req {
		n := fmt.Sprint(name)
		p, _ := props[n].(map[string]any)
		out[n] = plausibleValue(n, p)
	}
	return out
}

func plausibleValue(name string, p map[string]any) any {
	if v, ok := plausible[name]; ok {
		return v
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch schemaTypes(p)[0] {
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "x"
}

// schemaTypes lists the JSON types an argument schema allows.
func schemaTypes(p map[string]any) []string {
	switch t := p["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	case []string:
		return t
	}
	var out []string
	if alts, ok := p["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				out = append(out, schemaTypes(m)...)
			}
		}
	}
	if len(out) == 0 {
		out = []string{"string"}
	}
	return out
}

// hugeValues are the values that put huge where an argument of schema p
// takes a string: the string itself, an array holding it, an object with
// it as a key and as a value, and for a batch's operations, an operation
// naming it as the tool and one passing it as an argument.
func hugeValues(t *Tool, p map[string]any, huge string) []any {
	var out []any
	for _, typ := range schemaTypes(p) {
		switch typ {
		case "string":
			out = append(out, huge)
		case "array":
			if t.Toolset == "batch" {
				out = append(out,
					[]any{map[string]any{"tool": huge}},
					[]any{map[string]any{"tool": "list_windows", "arguments": map[string]any{"session_name": huge}}},
					[]any{map[string]any{"tool": "show_option", "arguments": map[string]any{"option": huge}}})
				continue
			}
			items, _ := p["items"].(map[string]any)
			iprops, _ := items["properties"].(map[string]any)
			if iprops == nil {
				out = append(out, []any{huge})
				continue
			}
			// An array of objects: one item per string field of theirs.
			for name, ip := range iprops {
				if ip, _ := ip.(map[string]any); slices.Contains(schemaTypes(ip), "string") {
					item := requiredOf(items, iprops)
					item[name] = huge
					out = append(out, []any{item})
				}
			}
		case "object":
			// A key, a value, and a regular expression filter's value.
			out = append(out, map[string]any{huge: "1"}, map[string]any{"FOO": huge}, map[string]any{"session_name__regex": huge})
		}
	}
	return out
}

// maps2 copies m, with key k set to v when given.
func maps2(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	if len(kv) == 2 {
		out[kv[0].(string)] = kv[1]
	}
	return out
}

// TestUnknownNamesNotEchoed: a tools/call or prompts/get naming nothing
// that exists is refused as the SDK refuses it (invalid params, the name
// quoted), but a huge name comes back clipped (the SDK quoted it whole).
func TestUnknownNamesNotEchoed(t *testing.T) {
	e := newEnv(t)
	huge := strings.Repeat("A", 1<<20)
	clipped := `"` + strings.Repeat("A", 40) + `…" (1048576 bytes)`
	ctx := context.Background()
	cases := []struct {
		name string
		call func(name string) error
		what string
	}{
		{"tool", func(n string) error {
			_, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: n})
			return err
		}, "tool"},
		{"prompt", func(n string) error {
			_, err := e.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: n})
			return err
		}, "prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct{ name, want string }{{"no_such", `"no_such"`}, {huge, clipped}} {
				err := tc.call(c.name)
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("err = %.200v, want a JSON-RPC invalid params error", err)
				}
				if want := "unknown " + tc.what + " " + c.want; je.Message != want {
					t.Fatalf("message %.300q, want %q", je.Message, want)
				}
			}
		})
	}
}
