package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// shellFields are the arguments documented to reach a shell (or to be typed
// or pasted into one, or to become a pane's command). Injection payloads in
// them are expected to run and touch files in the "shellok" directory, a
// positive control for the injection canary; every other field's payloads
// point at the "pwned" directory, which must stay empty.
var shellFields = map[string]bool{
	"run_command.command":  true,
	"send_keys.keys":       true,
	"send_keys_batch.keys": true,
	"send_and_wait.keys":   true, // typed exactly as send_keys types, then waited on
	"split_window.shell":   true,
	"respawn_pane.shell":   true,
	"paste_text.text":      true,
	"load_buffer.content":  true, // pasted into a pane by paste_buffer
	"set_option.value":     true, // default-command, status formats with #(...)
}

// fuzzEnv is the confined world the fuzz runs in: every path a socket
// argument can resolve to lies under root.
type fuzzEnv struct {
	root, tmpdir, sockdir, workdir, home, pwned, shellok, pipedir, freshdir string
	mainName, mainPath                                                      string

	markerN atomic.Int64
	markers sync.Map // marker file name -> "tool.field"

	poolMu  sync.Mutex
	panes   []string
	wins    []string
	sess    []string
	handles map[string][]string // buffer_name, run_id, cursor values the server returned
}

// learn keeps the handles a result carries, so later calls can use them.
func (e *fuzzEnv) learn(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "buffer_name" || k == "run_id" || k == "cursor") {
				e.poolMu.Lock()
				if e.handles == nil {
					e.handles = map[string][]string{}
				}
				if hs := e.handles[k]; len(hs) < 50 {
					e.handles[k] = append(hs, s)
				} else {
					hs[len(s)%len(hs)] = s
				}
				e.poolMu.Unlock()
			} else {
				e.learn(val)
			}
		}
	case []any:
		for _, val := range x {
			e.learn(val)
		}
	}
}

func (e *fuzzEnv) handle(kind string, r *rand.Rand) (string, bool) {
	e.poolMu.Lock()
	defer e.poolMu.Unlock()
	hs := e.handles[kind]
	if len(hs) == 0 {
		return "", false
	}
	return hs[r.Intn(len(hs))], true
}

func (e *fuzzEnv) pools() (panes, wins, sess []string) {
	e.poolMu.Lock()
	defer e.poolMu.Unlock()
	return e.panes, e.wins, e.sess
}

// payloads are shell, tmux-command and tmux-format injection attempts; %s
// is the marker file a successful injection creates.
var payloads = []string{
	"$(touch %s)",
	"`touch %s`",
	"x; touch %s",
	"x | touch %s",
	"x && touch %s",
	"#(touch %s)",
	"#{?1,#(touch %s),}",
	"x ; run-shell 'touch %s'",
	"x \\; run-shell 'touch %s'",
	"'; run-shell 'touch %s' ; '",
	"\"; run-shell \"touch %s\" ; \"",
	"x\nrun-shell 'touch %s'\n",
	"{ run-shell 'touch %s' }",
	"%%1 ; run-shell 'touch %s'",
}

// gen makes arguments for one worker from the tools' input schemas.
type gen struct {
	r      *rand.Rand
	env    *fuzzEnv
	tools  map[string]map[string]any // name -> input schema
	names  []string                  // sorted tool names
	canary bool                      // the last arguments aimed at a canary
	// clean calls (half of them) keep to the schema's types and plausible
	// targets so they get past validation and reach tmux; the others mix
	// in wrong types, unknown fields and hostile values everywhere.
	clean bool
}

func (g *gen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

// args makes one call's arguments for tool.
func (g *gen) args(tool string) map[string]any {
	g.canary = false
	g.clean = g.r.Intn(2) == 0
	out := g.object(tool, g.tools[tool], 0)
	if g.clean {
		// One socket argument at most, as a careful client would send.
		_, hasName := out["socket_name"]
		_, hasPath := out["socket_path"]
		if hasName && hasPath {
			delete(out, g.pick("socket_name", "socket_path"))
		}
	}
	return out
}

func (g *gen) object(tool string, s map[string]any, depth int) map[string]any {
	props, _ := s["properties"].(map[string]any)
	var req []string
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			if str, ok := r.(string); ok {
				req = append(req, str)
			}
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := map[string]any{}
	for _, k := range keys {
		required := slices.Contains(req, k)
		skip := 35
		if g.clean {
			skip = 65
		}
		if roll := g.r.Intn(100); (!required && roll < skip) || (required && !g.clean && roll < 3) {
			continue
		}
		ps, _ := props[k].(map[string]any)
		out[k] = g.value(tool, k, ps, depth)
	}
	if !g.clean && g.r.Intn(25) == 0 {
		out[g.pick("fz_unknown", "", "__proto__", "Pane_ID", "pane_id ")] = g.anyValue(depth)
	}
	return out
}

// required makes arguments with only the tool's required fields, each a
// plausible value, for the clobber sweep.
func (g *gen) required(tool string) map[string]any {
	g.clean = true
	s := g.tools[tool]
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	rs, _ := s["required"].([]any)
	for _, r := range rs {
		k, _ := r.(string)
		ps, _ := props[k].(map[string]any)
		if v, ok := g.domain(tool, k); ok && v != nil {
			out[k] = v
			continue
		}
		out[k] = g.fromSchema(tool, k, ps, 0)
	}
	return out
}

// value makes one argument: confined values for path fields, domain values
// for targets, and otherwise values of the schema's type or a wrong one.
func (g *gen) value(tool, field string, s map[string]any, depth int) any {
	switch field {
	case "socket_name":
		if !g.clean && g.r.Intn(12) == 0 {
			return g.wrongType()
		}
		return g.socketName()
	case "socket_path":
		if !g.clean && g.r.Intn(12) == 0 {
			return g.wrongType()
		}
		return g.socketPath()
	case "extra_socket_paths":
		if g.r.Intn(8) == 0 {
			return g.wrongType()
		}
		var ps []any
		for range g.r.Intn(4) {
			ps = append(ps, g.socketPath())
		}
		return ps
	case "output_path":
		return g.outputPath()
	case "operations":
		if strings.HasPrefix(tool, "call_") && g.r.Intn(10) < 8 {
			return g.batchOps(depth)
		}
	}
	if !g.clean && g.r.Intn(100) < 12 {
		return g.wrongType()
	}
	if v, ok := g.domain(tool, field); ok && (g.clean || g.r.Intn(100) < 55) {
		return v
	}
	return g.fromSchema(tool, field, s, depth)
}

func (g *gen) fromSchema(tool, field string, s map[string]any, depth int) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && (g.clean || g.r.Intn(100) < 80) {
		return enum[g.r.Intn(len(enum))]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			alt, _ := alts[g.r.Intn(len(alts))].(map[string]any)
			return g.fromSchema(tool, field, alt, depth)
		}
	}
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		return g.anyValue(depth)
	}
	switch types[g.r.Intn(len(types))] {
	case "null":
		return nil
	case "string":
		return g.str(tool, field)
	case "integer":
		if g.clean && g.r.Intn(3) > 0 {
			return g.r.Intn(50)
		}
		return g.integer()
	case "number":
		if g.clean && g.r.Intn(3) > 0 {
			return 0.1 + g.r.Float64()*2
		}
		return g.number()
	case "boolean":
		return g.r.Intn(2) == 0
	case "array":
		items, _ := s["items"].(map[string]any)
		n := g.r.Intn(4)
		if !g.clean && g.r.Intn(40) == 0 {
			n = 200
		}
		arr := []any{}
		for range n {
			arr = append(arr, g.fromSchema(tool, field, items, depth+1))
		}
		return arr
	case "object":
		if depth > 3 {
			return map[string]any{}
		}
		if _, ok := s["properties"]; ok {
			return g.object(tool, s, depth+1)
		}
		ap, _ := s["additionalProperties"].(map[string]any)
		obj := map[string]any{}
		for range g.r.Intn(4) {
			obj[g.envKey()] = g.fromSchema(tool, field, ap, depth+1)
		}
		return obj
	}
	return g.anyValue(depth)
}

// batchOps makes the operations of a call_*_tools_batch: real tool names
// with arguments from their own schemas (confined like any other call), or
// a boundary-sized list.
func (g *gen) batchOps(depth int) []any {
	if g.r.Intn(30) == 0 {
		ops := make([]any, 1001)
		for i := range ops {
			ops[i] = map[string]any{"tool": "list_sessions"}
		}
		return ops
	}
	var ops []any
	for range g.r.Intn(4) {
		name := g.names[g.r.Intn(len(g.names))]
		if strings.HasPrefix(name, "call_") && (depth > 0 || g.r.Intn(3) > 0) {
			name = "list_panes"
		}
		op := map[string]any{"tool": name}
		if g.r.Intn(10) > 0 {
			op["arguments"] = g.object(name, g.tools[name], depth+1)
		}
		if g.r.Intn(20) == 0 {
			op["tool"] = g.str("batch", "tool")
		}
		ops = append(ops, op)
	}
	return ops
}

// domain gives plausible target values, so calls reach past validation.
func (g *gen) domain(tool, field string) (any, bool) {
	panes, wins, sess := g.env.pools()
	orPick := func(pool []string, extra ...string) string {
		if len(pool) > 0 && (g.clean || g.r.Intn(4) > 0) {
			return pool[g.r.Intn(len(pool))]
		}
		return g.pick(extra...)
	}
	switch field {
	case "buffer_name", "run_id", "cursor":
		if h, ok := g.env.handle(field, g.r); ok && g.r.Intn(4) > 0 {
			return h, true
		}
		return nil, false
	case "pane_id", "source_pane_id", "target_pane_id":
		return orPick(panes, "%0", "%999999", "%", "%-1", "0", "%0 ", "%0;%1"), true
	case "window_id":
		return orPick(wins, "@0", "@999999", "@", "@-1"), true
	case "session_id":
		return orPick(sess, "$0", "$999999", "$", "$-1"), true
	case "session_name", "destination_session":
		if g.clean {
			return g.pick("main", "aux", "aux", "nope"), true
		}
		return g.pick("main", "aux", "=main", "mai", "main:", "nope", "main.0"), true
	case "window_index", "destination_index":
		return g.pick("0", "1", "2", "-1", "999999", "", "+1", "{end}"), true
	case "start_directory":
		return g.pick(g.env.workdir, g.env.root, "~", ".", "..", "sub", filepath.Join(g.env.root, "missing"), "", "~nosuchuser/x"), true
	case "option":
		return g.pick("history-limit", "mouse", "status", "status-right", "remain-on-exit", "automatic-rename",
			"pane-border-format", "@fz", "@fz-"+g.word(), "no-such-option", "default-command", "set-clipboard"), true
	case "hook_name":
		return g.pick("after-new-window", "pane-exited", "session-created", "client-attached", "no-such-hook"), true
	case "scope":
		return g.pick("server", "session", "window", "pane", "global", "bogus"), true
	case "layout":
		return g.pick("tiled", "even-horizontal", "main-vertical", "bb62,159x48,0,0{79x48,0,0,79x48,80,0}", "x"), true
	case "corner", "direction":
		return g.pick("top-left", "bottom-right", "up", "down", "left", "right", "last", "next", "previous", "above", "below"), true
	case "keys":
		if g.r.Intn(2) == 0 {
			return nil, false
		}
		return g.pick("C-c", "Enter", "BSpace", "Escape", "Up", "echo hi", "q", "C-l"), true
	}
	return nil, false
}

// socketName draws from the live test socket, fresh names under the temp
// TMUX_TMPDIR, names resolving onto canary files (plain, in a subdirectory,
// with ../ traversal), and invalid names. It never yields a name that
// resolves outside the test's temp root.
func (g *gen) socketName() any {
	w := g.r.Intn(100)
	switch {
	case w < 45:
		return g.env.mainName
	case w < 51:
		return fmt.Sprintf("fz-%d", g.r.Intn(1000))
	case w < 63:
		g.canary = true
		return g.pick("cn-plain", "sub/cn-sub", "../cn-up1", "../../cn-up2", "../../work/cn-rel", "./cn-plain")
	case w < 71:
		return g.pick(".", "..", "", "/", "sub", "../", "a/b/c", "-L", " ")
	case w < 76:
		return "fz\x00name"
	case w < 79:
		return strings.Repeat("a", 1<<20)
	case w < 86:
		return g.payload("socket_name", false)
	case w < 93:
		return g.pick("ñame", "名前", "a b", "x;y", "#{pane_id}", "$(x)")
	default:
		return strings.Repeat("n", 100+g.r.Intn(200))
	}
}

// socketPath is socketName's counterpart for socket_path: the live socket,
// fresh absolute paths, canaries at absolute, ~-relative, relative and ../
// paths (resolved against the server's working directory), a symlink, and
// invalid paths.
func (g *gen) socketPath() any {
	e := g.env
	w := g.r.Intn(100)
	switch {
	case w < 40:
		return e.mainPath
	case w < 46:
		return filepath.Join(e.freshdir, fmt.Sprintf("s%d", g.r.Intn(1000)))
	case w < 63:
		g.canary = true
		return g.pick(filepath.Join(e.root, "cn-abs"), "~/cn-home", "cn-rel", "./cn-rel2", "../cn-relup",
			"sub/../cn-rel", filepath.Join(e.root, "cn-link"), filepath.Join(e.workdir, "cn-rel"),
			filepath.Join(e.sockdir, "cn-plain"), filepath.Join(e.sockdir, "..", "cn-up1"))
	case w < 71:
		return g.pick(e.workdir, ".", "", "~", "sub", e.sockdir)
	case w < 76:
		return g.pick(filepath.Join(e.root, "missing", "x"), "missing/x", "~nosuchuser/x")
	case w < 80:
		return filepath.Join(e.root, "fz\x00path")
	case w < 83:
		return strings.Repeat("p", 1<<20)
	case w < 90:
		return filepath.Join(e.root, strings.Repeat("l", 200))
	default:
		return g.payload("socket_path", false)
	}
}

// outputPath keeps pipe_pane's files in their own directory (absolute, or
// relative to the server's working directory), away from the canaries.
func (g *gen) outputPath() any {
	e := g.env
	switch w := g.r.Intn(10); {
	case w < 5:
		return filepath.Join(e.pipedir, fmt.Sprintf("o%d", g.r.Intn(50)))
	case w < 7:
		return fmt.Sprintf("pipe-rel-%d", g.r.Intn(20))
	case w < 8:
		return nil
	default:
		return g.pick("", " ", filepath.Join(e.root, "pipe\x00x"), e.pipedir, filepath.Join(e.root, "missing", "o"))
	}
}

// payload makes an injection attempt whose success creates a marker file
// named after where it was sent.
func (g *gen) payload(where string, shell bool) string {
	dir := g.env.pwned
	if shell {
		dir = g.env.shellok
	}
	n := g.env.markerN.Add(1)
	name := fmt.Sprintf("m%d", n)
	g.env.markers.Store(name, where)
	return fmt.Sprintf(payloads[g.r.Intn(len(payloads))], filepath.Join(dir, name))
}

const printable = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

func (g *gen) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 1+g.r.Intn(10))
	for i := range b {
		b[i] = letters[g.r.Intn(len(letters))]
	}
	return string(b)
}

// str makes a string for tool.field. Shell fields get only harmless text
// (letters, digits, spaces, key names, unicode) besides their payloads, so
// that a shell running them cannot write anywhere but the shellok directory.
func (g *gen) str(tool, field string) string {
	where := tool + "." + field
	if shellFields[where] {
		switch g.r.Intn(10) {
		case 0, 9:
			return g.payload(where, true)
		case 1:
			return ""
		case 2:
			return g.pick("é", "中文", "🙂", "\u202e", "e\u0301", "\ufeff")
		case 3:
			return "a\x00b"
		case 4:
			return strings.Repeat("w", 1+g.r.Intn(4096))
		default:
			words := make([]string, 1+g.r.Intn(4))
			for i := range words {
				words[i] = g.word()
			}
			return strings.Join(words, " ")
		}
	}
	if g.clean {
		switch g.r.Intn(6) {
		case 0:
			return g.payload(where, false)
		case 1:
			return g.pick("#{pane_id}", "#{session_name}", "x;y", "a b", "é", "中文", "-x", "50%")
		default:
			return g.word()
		}
	}
	switch g.r.Intn(14) {
	case 0:
		return ""
	case 1, 2:
		b := make([]byte, 1+g.r.Intn(20))
		for i := range b {
			b[i] = printable[g.r.Intn(len(printable))]
		}
		return string(b)
	case 3:
		return g.pick("é", "中文", "🙂", "\u202e", "e\u0301", "\ufeff", "\u0000", "\U0010FFFF", "ǅ")
	case 4:
		return g.pick("a\x00b", "\x00", "x\x00")
	case 5:
		return g.pick("\x1b[31m", "\r\n", "\t", "\x7f", "\x1b]0;t\x07", "a\nb", "\x1bP", "\x18")
	case 6:
		if g.r.Intn(20) == 0 {
			return strings.Repeat("L", 1<<20)
		}
		return strings.Repeat("L", 1+g.r.Intn(65536))
	case 7:
		return g.pick("#{pane_id}", "#{?pane_active,a,b}", "#[fg=red]", "#{E:@x}", "#{T:pane_title}",
			"#{s/a/b/:pane_id}", "##", "#", "#{", "}", "#{l:#{pane_id}}", "#{pane_id", "#{=-5:pane_title}")
	case 8:
		return g.pick("%0", "@0", "$0", "=main", "main:0.0", "-t", "--", "-F", "{last}", "!", "+", "-", "~", ":", ".", "{marked}")
	case 9:
		return g.pick("-1", "0", "1e9", "99999999999999999999", "0x10", "NaN", "1.5", " 1", "+5", "50%", "-0")
	case 10, 11:
		return g.payload(where, false)
	case 12:
		return g.pick("../x", "/", "~", ".", "/dev/null", "../../..", "(", ")", "[", "a|b", "a.*", "(?i)x", "\\")
	default:
		return g.word()
	}
}

func (g *gen) integer() any {
	return []any{0, 1, -1, 2, 3, 5, 10, 24, 80, 200, 1000, 10000, 65535, 65536, 2147483647, 2147483648,
		-2147483648, 4294967296, json.Number("9007199254740993"), json.Number("9223372036854775807"),
		json.Number("-9223372036854775808"), json.Number("9223372036854775808"), json.Number("1e400"),
		1.5, g.r.Intn(100)}[g.r.Intn(25)]
}

func (g *gen) number() any {
	return []any{0, -1, 0.001, 0.01, 0.05, 0.5, 1, 1.5, 2, 3, 30, 1e9, json.Number("1e308"),
		json.Number("-0"), json.Number("1e400"), 1e-300, g.r.Float64() * 3}[g.r.Intn(17)]
}

func (g *gen) wrongType() any {
	return []any{42, -1, 1.5, true, false, "str", []any{}, []any{1, "a"}, map[string]any{"k": "v"}, nil,
		json.Number("1e400"), map[string]any{}}[g.r.Intn(12)]
}

func (g *gen) anyValue(depth int) any {
	if depth > 2 || g.r.Intn(3) > 0 {
		return g.wrongType()
	}
	return map[string]any{g.envKey(): g.anyValue(depth + 1)}
}

// envKey is a map key for environment-like objects. It never names a
// variable a shell evaluates at start-up (ENV, PS1, PROMPT_COMMAND...).
func (g *gen) envKey() string {
	switch g.r.Intn(6) {
	case 0:
		return ""
	case 1:
		return "FZ_" + strings.ToUpper(g.word())
	case 2:
		return g.pick("A=B", "a b", "é", "x\x00y", "-x")
	default:
		return "FZ" + g.word()
	}
}
