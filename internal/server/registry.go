package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
)

// Preset is an annotation preset of the reference (contract 1.0). Every tool
// names one, so its hints are always stated, never left to a client's
// defaults.
type Preset int

const (
	presetUnset Preset = iota
	RO                 // read-only, idempotent, closed world
	MUT                // changes state, idempotent
	CRE                // creates something, not idempotent
	SHL                // reaches a shell: open world
	DES                // destroys (destructive tier)
	MDS                // destroys but is in the mutating tier
	BSE                // batch with side effects
)

// annotations are the hints of a preset. They carry no title: the tool's
// own Title is on the wire already, and repeating it would grow tools/list.
func (p Preset) annotations() *mcp.ToolAnnotations {
	t, f := true, false
	a := &mcp.ToolAnnotations{}
	switch p {
	case RO:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint = true, &f, true, &f
	case MUT:
		a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint = &f, true, &f
	case CRE:
		a.DestructiveHint, a.OpenWorldHint = &f, &f
	case SHL:
		a.DestructiveHint, a.OpenWorldHint = &f, &t
	case DES, MDS:
		a.DestructiveHint, a.OpenWorldHint = &t, &f
	case BSE:
		a.DestructiveHint, a.OpenWorldHint = &t, &t
	default:
		return nil
	}
	return a
}

// Tool is one entry of the registration table: everything the server needs
// to list, gate, document and call a tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Tier        config.Tier
	Preset      Preset
	Toolset     string
	SelfBounded bool // bounded by the wait ceiling: never retried, never batched
	AlwaysLoad  bool // discovery anchor clients keep loaded
	// Doc is more about the tool for docs/tools.md, where a reader has
	// room for it: a model is not sent it.
	Doc string

	schemas *lazySchemas
	call    func(ctx context.Context, c *Call, args map[string]any) (*mcp.CallToolResult, error)
}

// lazySchemas holds a tool's argument and result schemas, built by
// reflection on first use. Start-up does not need them: tools/list is
// served from the schemas generated at build time (schemas_gen.go), so
// only a tool that is called, validated or documented pays for its own.
type lazySchemas struct {
	once     sync.Once
	build    func() (in, out map[string]any)
	in, out  map[string]any
	defaults map[string]any // argument defaults this server sets (overrideDefault)
}

func (l *lazySchemas) load() {
	l.once.Do(func() {
		l.in, l.out = l.build()
		props, _ := l.in["properties"].(map[string]any)
		for name, v := range l.defaults {
			props[name].(map[string]any)["default"] = v
		}
	})
}

// inSchema is the tool's argument schema: the object every call's
// arguments are validated against.
func (t *Tool) inSchema() map[string]any { t.schemas.load(); return t.schemas.in }

// outSchema is the tool's result schema.
func (t *Tool) outSchema() map[string]any { t.schemas.load(); return t.schemas.out }

// overrideDefault sets the advertised default of one argument for this
// server, before the schemas are first used. The tool is then listed from
// its reflected schema, not the generated one, which carries the struct
// tag's default.
func (t *Tool) overrideDefault(arg string, v any) {
	if t.schemas.defaults == nil {
		t.schemas.defaults = map[string]any{}
	}
	t.schemas.defaults[arg] = v
}

// Toolsets, each tool belongs to exactly one.
var Toolsets = []string{"server", "session", "window", "pane", "buffer", "option", "environment", "hook", "wait", "batch"}

// check reports a tool that must not register (fail closed).
func (t *Tool) check() error {
	switch {
	case t.Name == "" || t.Description == "" || t.Title == "":
		return fmt.Errorf("tool %q: name, title and description are required", t.Name)
	case t.Tier < config.Readonly || t.Tier > config.Destructive:
		return fmt.Errorf("tool %q: no safety tier", t.Name)
	case t.Preset.annotations() == nil:
		return fmt.Errorf("tool %q: no annotation preset", t.Name)
	case t.Tier == config.Readonly && t.Preset != RO:
		return fmt.Errorf("tool %q: readonly tier needs the RO preset", t.Name)
	}
	if !slices.Contains(Toolsets, t.Toolset) {
		return fmt.Errorf("tool %q: unknown toolset %q", t.Name, t.Toolset)
	}
	return nil
}

// mcpTool is the tool as listed on the wire. Its schemas are the ones
// generated at build time when they exist and apply (TestGeneratedSchemas
// keeps them equal to the reflected ones), else the reflected ones.
func (t *Tool) mcpTool() *mcp.Tool {
	mt := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		Annotations: t.Preset.annotations(),
	}
	if in, out, ok := generatedSchemas(t.Name); ok && len(t.schemas.defaults) == 0 {
		mt.InputSchema = json.RawMessage(in)
		if out != "" {
			mt.OutputSchema = json.RawMessage(out)
		}
	} else {
		mt.InputSchema = advertisedInput(t.inSchema())
		if out := t.outSchema(); out != nil {
			mt.OutputSchema = out
		}
	}
	if t.AlwaysLoad {
		mt.Meta = mcp.Meta{"anthropic/alwaysLoad": true}
	}
	return mt
}

// Text is the result type of tools that answer with a sentence or raw text
// rather than a model.
type Text string

// define binds a typed handler to a table entry. In is the argument struct
// (see schema.go); Out is a struct (structured result), a slice or Text
// (both wrapped as {"result": ...}, as the reference does; see buildResult).
func define[In, Out any](t Tool, h func(ctx context.Context, c *Call, in In) (Out, error)) *Tool {
	var wrap bool
	switch reflect.TypeFor[Out]().Kind() {
	case reflect.Slice, reflect.String:
		wrap = true
	}
	t.schemas = &lazySchemas{build: func() (in, out map[string]any) {
		in, out, err := toolSchemas[In, Out]()
		if err != nil {
			panic(fmt.Sprintf("tool %s: %v", t.Name, err))
		}
		return in, out
	}}
	strs := sync.OnceValue(func() map[string][]int { return stringFields(reflect.TypeFor[In]()) })
	t.call = func(ctx context.Context, c *Call, args map[string]any) (*mcp.CallToolResult, error) {
		var arg In
		if err := decodeInto(&arg, args, strs()); err != nil {
			return nil, &ToolError{Msg: "arguments do not match the schema", Type: "ValidationError", Expected: true}
		}
		out, err := h(ctx, c, arg)
		if err != nil {
			return nil, err
		}
		c.stampHost(&out)
		var res *mcp.CallToolResult
		if rb, ok := any(out).(resultBuilder); ok {
			res, err = rb.buildResult()
		} else {
			res, err = buildResult(out, wrap)
		}
		if err == nil {
			for _, n := range c.notes {
				res.Content = append(res.Content, &mcp.TextContent{Text: n})
			}
		}
		return res, err
	}
	return &t
}

// decodeInto fills arg, a pointer to a tool's argument struct, from the
// validated arguments: string and boolean members whose field is a string,
// *string, bool or *bool (strs, see stringFields) are assigned (a null one
// left as the zero struct has it, as JSON does), the others go through
// JSON; with none left (a get_pane_info), no JSON at all. The
// strings are then the very ones decoded from the request, where a JSON
// round trip made two more copies of each, plus the encoder's growing
// buffer: for a 4 MiB load_buffer content, 21 MB of garbage per call.
func decodeInto(arg any, args map[string]any, strs map[string][]int) error {
	rest := args
	if len(strs) > 0 {
		rest = make(map[string]any, len(args))
		v := reflect.ValueOf(arg).Elem()
		for k, x := range args {
			idx, direct := strs[k]
			if !direct {
				rest[k] = x
				continue
			}
			f := v.FieldByIndex(idx)
			ptr := f.Kind() == reflect.Pointer
			kind := f.Kind()
			if ptr {
				kind = f.Type().Elem().Kind()
			}
			switch x := x.(type) {
			case nil:
				// JSON null leaves a field of the zero struct as it is.
			case string:
				if kind != reflect.String {
					rest[k] = x
				} else if ptr {
					f.Set(reflect.ValueOf(&x))
				} else {
					f.SetString(x)
				}
			case bool:
				if kind != reflect.Bool {
					rest[k] = x
				} else if ptr {
					f.Set(reflect.ValueOf(&x))
				} else {
					f.SetBool(x)
				}
			default:
				rest[k] = x
			}
		}
		if len(rest) == 0 {
			return nil
		}
	}
	buf, _ := json.Marshal(rest)
	return json.Unmarshal(buf, arg)
}

// stringFields maps the JSON names of t's string, *string, bool and *bool
// fields,
// those of embedded structs included, to their index, for decodeInto. A
// field is left out (and decoded through JSON) when its tag has options
// beyond omitempty, when its name is not unique, or when it sits behind an
// embedded pointer.
func stringFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	seen := map[string]int{}
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "" || name == "-" {
			continue
		}
		seen[name]++
		if opts != "" && opts != "omitempty" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if (ft != reflect.TypeFor[string]() && ft != reflect.TypeFor[bool]()) || behindPointer(t, f.Index) {
			continue
		}
		out[name] = f.Index
	}
	for name, n := range seen {
		if n > 1 {
			delete(out, name)
		}
	}
	return out
}

// behindPointer reports whether reaching the field at index from t goes
// through a pointer.
func behindPointer(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer {
			return true
		}
		t = f.Type
	}
	return false
}

// toolSchemas reflects the argument schema of In and the result schema of
// Out. A result that is not a struct (a list, a string) is wrapped as
// {"result": ...}; see buildResult.
func toolSchemas[In, Out any]() (in, out map[string]any, err error) {
	in, err = objectSchema(reflect.TypeFor[In](), true)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	outType := reflect.TypeFor[Out]()
	var zero Out
	rb, custom := any(zero).(resultBuilder)
	switch {
	case custom:
		out = rb.outputSchema()
	case outType.Kind() == reflect.Struct:
		out, err = objectSchema(outType, false)
	case outType.Kind() == reflect.Slice:
		var items map[string]any
		items, _, err = typeSchema(outType.Elem())
		out = wrappedSchema(map[string]any{"type": "array", "items": items})
	case outType.Kind() == reflect.String:
		out = wrappedSchema(map[string]any{"type": "string"})
	default:
		err = fmt.Errorf("unsupported result type %s", outType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("output schema: %w", err)
	}
	// Result fields are documented in docs/tools.md and the tool description;
	// their schema carries types only (no descriptions, no defaults, which
	// mean nothing for a result), which keeps tools/list small.
	return in, withoutKeywords(out, "description", "default"), nil
}

// resultBuilder is a result that shapes its own answer and output schema,
// for a tool whose answer is more than one value of the shapes buildResult
// knows (capture_pane's text and, when asked for, its styles).
type resultBuilder interface {
	buildResult() (*mcp.CallToolResult, error)
	outputSchema() map[string]any
}

// wrappedSchema is the output schema of a result that is not an object:
// the value goes under "result", marked the way FastMCP marks it, so a
// FastMCP client unwraps it again.
func wrappedSchema(result map[string]any) map[string]any {
	return map[string]any{
		"type":                  "object",
		"properties":            map[string]any{"result": result},
		"required":              []any{"result"},
		"x-fastmcp-wrap-result": true,
	}
}

// wrapMeta is the _meta FastMCP puts on a wrapped result; its client reads
// it to unwrap structuredContent.result without consulting the schema.
func wrapMeta() mcp.Meta { return mcp.Meta{"fastmcp": map[string]any{"wrap_result": true}} }

// buildResult shapes a handler's value as FastMCP does: a struct is its
// JSON in both the text and the structured content; a string or a list is
// wrapped as {"result": value} in the structured content, while the text
// is the value itself (the string as is, the list as a bare JSON array).
func buildResult(out any, wrap bool) (*mcp.CallToolResult, error) {
	if !wrap {
		raw, err := marshalJSON(out)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}, nil
	}
	var text string
	var structured []byte
	switch s := out.(type) {
	case Text:
		text, out = string(s), string(s)
	case string:
		text = s
	default:
		if v := reflect.ValueOf(out); v.Kind() == reflect.Slice && v.IsNil() {
			out = reflect.MakeSlice(v.Type(), 0, 0).Interface()
		}
		// The list is encoded once: {"result": value} is its encoding
		// with the key around it, byte for byte what encoding the map
		// would give.
		const key = `{"result":`
		if ja, ok := out.(jsonAppender); ok {
			// Appended after the key: one buffer fewer (a 500-pane list
			// is 230 KB).
			b, err := ja.appendJSON([]byte(key))
			if err != nil {
				return nil, err
			}
			text, structured = string(b[len(key):]), append(b, '}')
			break
		}
		raw, err := marshalJSON(out)
		if err != nil {
			return nil, err
		}
		text = string(raw)
		structured = make([]byte, 0, len(raw)+len(`{"result":}`))
		structured = append(append(append(structured, key...), raw...), '}')
	}
	if structured == nil {
		var err error
		if structured, err = marshalJSON(map[string]any{"result": out}); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(structured),
		Meta:              wrapMeta(),
	}, nil
}

// marshalJSON encodes v without escaping '<', '>' and '&', as pydantic
// does: the text copy of a result is read as text, where "\u003c" would
// differ from the reference's "<".
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// invoke runs a tool with validation, panic recovery, the read-only retry,
// error mapping and the audit record. It is the single path for every call,
// including the nested calls of batch tools and the CLI's call subcommand.
// parent is the request id of the enclosing batch call, if any.
func (s *Server) invoke(ctx context.Context, t *Tool, req *mcp.CallToolRequest, raw json.RawMessage, parent string) (res *mcp.CallToolResult) {
	start := time.Now()
	id := s.nextRequestID()
	if parent == "" {
		metrics.CallStarted() // metrics.go; a batch's rows count in the batch's call
	}
	defer func() {
		s.auditCall(ctx, t.Name, req, raw, id, parent, start, res)
		if parent == "" {
			metrics.CallEnded(t.Name, callOutcome(res), time.Since(start))
		}
	}()
	args, err := checkArguments(t.Title, t.inSchema(), raw)
	if err != nil {
		te := toToolError(err)
		if te.Suggestion != "" && req != nil {
			te.Suggestion += waitForPreviousNote(raw, req)
		}
		return errorResult(te)
	}
	c := s.newCall()
	c.Req, c.Tool, c.RequestID = req, t, id
	if err := c.bindHost(hostArg(args)); err != nil {
		return errorResult(toToolError(err))
	}
	if parent == "" {
		// A tool the caller's scope refuses is refused before anyone is
		// asked (scope.go).
		if err := c.scopeRefusal(ctx, t); err != nil {
			return errorResult(toToolError(err))
		}
		// Ask the person first where they want to be asked (confirm.go);
		// a batch asks once for its rows, which run unasked.
		if r := c.confirm(ctx, args); r != nil {
			return r
		}
	}
	res, err = s.safeCall(ctx, t, c, args)
	if err != nil && t.Tier == config.Readonly && !t.SelfBounded && retryable(err) {
		s.log.Warn("retrying read-only tool after a transient tmux failure", "tool", t.Name, "error", err)
		select {
		case <-time.After(100 * time.Millisecond):
			res, err = s.safeCall(ctx, t, c, args)
		case <-ctx.Done():
		}
	}
	if err != nil {
		te := toToolError(err)
		if te.Expected {
			s.log.Warn("tool error", "tool", t.Name, "type", te.Type, "error", te.Msg)
		} else {
			s.log.Error("tool error", "tool", t.Name, "type", te.Type, "error", err)
		}
		return errorResult(te)
	}
	return s.limitSize(t, res)
}

func (s *Server) safeCall(ctx context.Context, t *Tool, c *Call, args map[string]any) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in tool handler", "tool", t.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, &ToolError{Msg: fmt.Sprintf("Unexpected error: internal failure in %s (logged by the server)", t.Name), Type: "InternalError"}
		}
	}()
	if err := s.checkCall(t, args); err != nil {
		return nil, err
	}
	args, restore, err := c.applyScope(ctx, t, args) // scope.go
	if err != nil {
		return nil, err
	}
	if restore != nil {
		return restore(t.call(ctx, c, args))
	}
	return t.call(ctx, c, args)
}

// waitForPreviousNote explains a Gemini CLI scheduling argument that leaks
// into tool calls; the argument is still rejected, never stripped.
func waitForPreviousNote(raw json.RawMessage, req *mcp.CallToolRequest) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	if _, ok := m["wait_for_previous"]; !ok {
		return ""
	}
	client := "your MCP client"
	if ci := req.ClientInfo(); ci != nil && ci.Name != "" {
		client = fmt.Sprintf("%s (%s)", ci.Name, ci.Version)
	}
	return " wait_for_previous is a scheduling hint that " + client + " leaked into the tool arguments; it is not a tool argument."
}

// tool returns the table entry of a tool, visible or not.
func (s *Server) tool(name string) *Tool {
	for _, t := range s.all {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
