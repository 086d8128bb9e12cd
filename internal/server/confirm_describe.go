package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// The question names exactly what the call will do, from tmux's own view
// at the moment of asking: the server, the session and its windows, the
// panes and what runs in them (the foreground inspection: the program and
// whether it waits for input, runs or sleeps), and the text about to be
// typed. It is rendered twice: for the person, and for the audit log,
// where typed text and other sensitive values are digested as in every
// audit record; secret input (secret: true, or text bound for a pane at a
// password prompt) is shown in neither.

// Bounds of one question, so that a server of a thousand panes still gives
// a question a person can read: sessions, windows per session and panes
// per window listed, panes whose foreground is inspected, and the
// characters of typed text shown.
const (
	confirmMaxSessions  = 20
	confirmMaxWindows   = 20
	confirmMaxPanes     = 12
	confirmMaxInspected = 64
	confirmMaxTyped     = 2000
)

// confirmRow is one call a question covers: the call itself, or one
// operation of a batch.
type confirmRow struct {
	name    string
	tool    *Tool
	args    map[string]any // validated; nil when the row will be refused
	refusal string         // why the row will not run, or ""
	call    *Call          // bound to the row's host
}

// confirmRows lists the calls c would make: itself, or a batch's rows as
// runBatch will run them (each validated, on its own host or the batch's).
func (c *Call) confirmRows(args map[string]any) []confirmRow {
	if c.Tool.Toolset != "batch" {
		return []confirmRow{{name: c.Tool.Name, tool: c.Tool, args: args, call: c}}
	}
	ops, _ := args["operations"].([]any)
	batchHost, _ := args[HostArgName].(string)
	rows := make([]confirmRow, 0, len(ops))
	for _, op := range ops {
		m, _ := op.(map[string]any)
		name, _ := m["tool"].(string)
		row := confirmRow{name: name}
		if row.refusal = c.batchRefusal(name, c.Tool.Tier); row.refusal != "" {
			rows = append(rows, row)
			continue
		}
		row.tool = c.visible[name]
		opArgs, _ := m["arguments"].(map[string]any)
		if batchHost != "" && takesHost(row.tool) {
			if _, given := opArgs[HostArgName]; !given {
				opArgs = maps.Clone(opArgs)
				if opArgs == nil {
					opArgs = map[string]any{}
				}
				opArgs[HostArgName] = batchHost
			}
		}
		raw, _ := json.Marshal(opArgs)
		v, err := checkArguments(row.tool.Title, row.tool.inSchema(), raw)
		if err == nil {
			err = c.checkCall(row.tool, v)
		}
		rc := c.newCall()
		rc.Req, rc.Tool, rc.RequestID = c.Req, row.tool, c.RequestID
		if err == nil {
			err = rc.bindHost(hostArg(v))
		}
		if err != nil {
			row.refusal = "its arguments are not valid, so it will fail: " + firstLine(toToolError(err).Msg)
		} else {
			row.args, row.call = v, rc
		}
		rows = append(rows, row)
	}
	return rows
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// question is one question in its two renderings.
type question struct {
	person string // as the person is asked
	audit  string // as the audit log keeps it
	secret bool   // some text to be typed was left out as secret
}

func (q question) params() *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: q.person, RequestedSchema: confirmSchema}
}

// question describes rows (one call, or a batch's) from tmux's current
// state.
func (c *Call) question(ctx context.Context, rows []confirmRow) question {
	d := &describer{ctx: ctx, listings: map[string]*listing{}}
	descs := make([]rowDesc, len(rows))
	wheres := map[string]bool{}
	for i, r := range rows {
		descs[i] = d.describe(r)
		if descs[i].where != "" {
			wheres[descs[i].where] = true
		}
	}
	batch := c.Tool.Toolset == "batch"
	var lines []line
	add := func(segs ...seg) { lines = append(lines, line(segs)) }
	if batch {
		stop := "stopping at the first that fails"
		if onErr, _ := c.confirmArg("on_error").(string); onErr == "continue" {
			stop = "each whatever the others do"
		}
		add(txt(fmt.Sprintf("tmux-mcp asks before an agent runs %s: %d calls in order, %s.", c.Tool.Name, len(rows), stop)))
	} else {
		add(txt(fmt.Sprintf("tmux-mcp asks before an agent runs %s (%s tier).", c.Tool.Name, c.Tool.Tier)))
	}
	if len(wheres) == 1 {
		for w := range wheres {
			add(txt("tmux server: " + w + "."))
		}
	}
	for i, dsc := range descs {
		for j, l := range dsc.lines(len(wheres) > 1) {
			switch {
			case batch && j == 0:
				l = append(line{txt(fmt.Sprintf("%d. ", i+1))}, l...)
			case batch:
				l = append(line{txt("   ")}, l...)
			}
			lines = append(lines, l)
		}
	}
	if batch {
		add(txt("Accept to run them all; decline to run none."))
	} else {
		add(txt("Accept to run it; decline to refuse."))
	}
	q := question{person: renderLines(lines, textForm{}), audit: renderLines(lines, textForm{audit: true})}
	for _, l := range lines {
		for _, s := range l {
			q.secret = q.secret || s.secret
		}
	}
	return q
}

// confirmArg is an argument of the call being confirmed, as sent.
func (c *Call) confirmArg(name string) any {
	if c.Req == nil || c.Req.Params == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(c.Req.Params.Arguments, &m)
	return m[name]
}

// seg is a piece of a question's line: plain text, or a value rendered
// one way for the person and another for the audit log.
type seg struct {
	text      string
	typed     bool // text that reaches a program: quoted for the person, digested in the log
	sensitive bool // another sensitive value (audit.SensitiveKeys): shown to the person, digested in the log
	value     any  // a sensitive value that is not a string
	secret    bool // typed or sensitive, and shown nowhere
}

type line []seg

func txt(s string) seg { return seg{text: s} }

// textForm is how values are rendered: for the person or for the log.
type textForm struct{ audit bool }

func (f textForm) seg(s seg) string {
	switch {
	case !s.typed && !s.sensitive:
		return s.text
	case s.secret && f.audit:
		return audit.SecretMark
	case s.secret:
		return "[secret input, not shown]"
	case f.audit:
		d := audit.DigestOf(s.text)
		if s.value != nil {
			d = audit.DigestOf(s.value)
		}
		return fmt.Sprintf("[%d chars, sha256 %s]", d.Len, d.SHA256Prefix)
	case s.value != nil:
		b, _ := json.Marshal(s.value)
		return clipText(string(b))
	}
	return quoteTyped(s.text)
}

func renderLines(lines []line, f textForm) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, s := range l {
			b.WriteString(f.seg(s))
		}
	}
	return b.String()
}

// quoteTyped shows typed text exactly (Go quoting: a newline is \n, a
// control character is escaped), cut after confirmMaxTyped characters.
func quoteTyped(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= confirmMaxTyped {
		return fmtQuote(s)
	}
	r := []rune(s)
	return fmtQuote(string(r[:confirmMaxTyped])) + fmt.Sprintf(" … and %d more characters", n-confirmMaxTyped)
}

func fmtQuote(s string) string { return fmt.Sprintf("%q", s) }

func clipText(s string) string {
	if utf8.RuneCountInString(s) <= confirmMaxTyped {
		return s
	}
	return string([]rune(s)[:confirmMaxTyped]) + "…"
}

// describer reads what the rows touch, one pane listing per tmux server.
type describer struct {
	ctx       context.Context
	listings  map[string]*listing
	inspected int
}

// listing is one tmux server's panes, each with its session and window.
type listing struct {
	rows []tmux.Row
	err  error
	fg   map[string]paneProgram // by pane id
	ours map[string]int         // our own clients attached, by session id (sessionQuery)
}

type paneProgram struct {
	text   string
	secret bool // at a password prompt
}

// describeFields are the pane listing's fields: the foreground
// inspection's and a watcher's (tmux.WhereFields), the names to show, and
// the command last, as the one free-form field (a program names itself).
var describeFields = []string{"session_id", "window_id", "window_index", "pane_id", "pane_index", "pane_pid", "pane_tty", "pane_dead",
	"session_attached", "pid", "start_time", "session_name", "window_name", "pane_current_command"}

func (d *describer) list(c *Call, sock tmux.Socket) *listing {
	key := c.host + "\x00" + sock.String()
	if l := d.listings[key]; l != nil {
		return l
	}
	l := &listing{fg: map[string]paneProgram{}}
	l.rows, l.ours, l.err = c.sessionQuery(d.ctx, sock, describeFields, tmux.Command{"list-panes", "-a", "-F", tmux.Format(describeFields...)})
	if l.err == nil {
		l.rows, l.err = c.scopeListing(d.ctx, sock, l.rows) // scope.go: nothing outside the caller's scope is named
	}
	d.listings[key] = l
	return l
}

// program is what runs in a pane, e.g. `vim, waiting for input`.
func (d *describer) program(c *Call, sock tmux.Socket, l *listing, r tmux.Row) paneProgram {
	if p, ok := l.fg[r["pane_id"]]; ok {
		return p
	}
	cmd := r["pane_current_command"]
	if d.inspected >= confirmMaxInspected {
		return paneProgram{text: describeCommand(cmd)}
	}
	d.inspected++
	fg := c.inspectForeground(d.ctx, sock, r, nil)
	if fg.Command != "" {
		cmd = fg.Command
	}
	p := paneProgram{text: describeCommand(cmd), secret: fg.Secret}
	if s := stateText(fg); s != "" {
		p.text += ", " + s
	}
	l.fg[r["pane_id"]] = p
	return p
}

func describeCommand(cmd string) string {
	if cmd == "" {
		return "(unknown program)"
	}
	return errarg.Bare(cmd)
}

// stateText is a foreground report as a person reads it.
func stateText(r foreground.Report) string {
	secs := func(f float64) string {
		if f < 1 {
			return ""
		}
		return fmt.Sprintf(" for %.0f s", f)
	}
	switch r.State {
	case foreground.WaitingForInput:
		switch {
		case r.Secret:
			return "waiting for input at a password prompt"
		case r.ShellAtPrompt && isShell(r.Command):
			return "a shell at its prompt"
		}
		return "waiting for input"
	case foreground.Running:
		return "running" + secs(r.StateSeconds)
	case foreground.Sleeping:
		return "busy (sleeping" + secs(r.StateSeconds) + ")"
	case foreground.Stopped:
		return "stopped (suspended)"
	case foreground.Exited:
		return "exited (a dead pane)"
	}
	return ""
}

// rowDesc is what one row will do.
type rowDesc struct {
	head    line   // the action and its target
	body    []line // the objects it touches, typed text, other arguments
	where   string // its tmux server, e.g. `socket name work on this machine`
	refusal string
}

// lines renders the description; with where, the server is named on the
// row (a batch that reaches more than one).
func (r rowDesc) lines(where bool) []line {
	head := slices.Clone(r.head)
	if r.refusal != "" {
		return []line{append(head, txt(": will not run: "+r.refusal))}
	}
	if where && r.where != "" {
		head = append(head, txt(" [tmux server: "+r.where+"]"))
	}
	out := []line{head}
	for _, b := range r.body {
		out = append(out, append(line{txt("  ")}, b...))
	}
	return out
}

// typedLabels are the arguments whose text reaches a program, with how
// the question names them.
var typedLabels = map[string]string{"keys": "keys to type", "text": "text to paste", "command": "command to run", "content": "buffer content"}

// targetArgs are shown as the objects they name, or not at all.
var targetArgs = map[string]bool{"pane_id": true, "session_name": true, "session_id": true, "window_id": true, "window_index": true,
	"socket_name": true, "socket_path": true, HostArgName: true, "source_pane_id": true, "target_pane_id": true, "secret": true, "enter": true}

func (d *describer) describe(r confirmRow) rowDesc {
	if r.refusal != "" {
		return rowDesc{head: line{txt(r.name)}, refusal: r.refusal}
	}
	c, t, args := r.call, r.tool, r.args
	var sa SocketArgs
	if v, ok := args["socket_name"].(string); ok {
		sa.SocketName = &v
	}
	if v, ok := args["socket_path"].(string); ok {
		sa.SocketPath = &v
	}
	sock := c.Socket(sa)
	desc := rowDesc{where: sock.String()}
	if c.host != "" {
		desc.where = "socket " + desc.where + " on host " + c.host
	} else {
		desc.where = "socket " + desc.where + " on this machine"
	}
	if t.Tier == config.Readonly {
		desc.head = line{txt(t.Name + " (read-only)")}
		return desc
	}
	secret, _ := args["secret"].(bool)
	head, body, atPassword := d.target(c, sock, t, args)
	desc.head, desc.body = head, body
	secret = secret || atPassword
	props, _ := t.inSchema()["properties"].(map[string]any)
	var other line
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := args[k]
		ps, _ := props[k].(map[string]any)
		switch {
		case targetArgs[k] || k == "operations" && t.Name == "send_keys_batch":
		case typedLabels[k] != "":
			s, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				s = string(b)
			}
			l := line{txt(typedLabels[k] + ": "), seg{text: s, typed: true, secret: secret}}
			if _, hasEnter := props["enter"]; hasEnter && args["enter"] != false {
				l = append(l, txt(", then Enter"))
			}
			desc.body = append(desc.body, l)
		case isDefault(ps, v):
		default:
			if len(other) > 0 {
				other = append(other, txt(", "))
			}
			if audit.SensitiveKeys[k] {
				s, isStr := v.(string)
				sv := seg{sensitive: true, secret: secret, text: s}
				if !isStr {
					sv.value = v
				}
				other = append(other, txt(k+"="), sv)
			} else {
				b, _ := json.Marshal(v)
				other = append(other, txt(k+"="+clipText(string(b))))
			}
		}
	}
	if len(other) > 0 {
		desc.body = append(desc.body, append(line{txt("other arguments: ")}, other...))
	}
	return desc
}

// isDefault reports whether v is the argument's default (the validator
// fills defaults in, so every call carries them; only choices are shown).
func isDefault(prop map[string]any, v any) bool {
	d, ok := prop["default"]
	if !ok {
		return v == nil
	}
	a, _ := json.Marshal(d)
	b, _ := json.Marshal(v)
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// paneScope is a call's target as its arguments name it.
type paneScope struct {
	paneID, windowID, windowIndex, sessionID, sessionName string
}

func scopeOf(args map[string]any) paneScope {
	s := func(k string) string { v, _ := args[k].(string); return v }
	p := paneScope{paneID: s("pane_id"), windowID: s("window_id"), sessionID: s("session_id"), sessionName: s("session_name")}
	if wi, ok := args["window_index"]; ok && wi != nil {
		p.windowIndex = fmt.Sprint(wi)
	}
	return p
}

func (p paneScope) session(r tmux.Row) bool {
	switch {
	case p.sessionID != "":
		return r["session_id"] == p.sessionID
	case p.sessionName != "":
		return r["session_name"] == p.sessionName
	}
	return true
}

// target describes the objects a call touches, and reports whether text
// it types would go to a pane at a password prompt.
func (d *describer) target(c *Call, sock tmux.Socket, t *Tool, args map[string]any) (line, []line, bool) {
	l := d.list(c, sock)
	if l.err != nil {
		msg := "tmux could not list this server's panes (" + errarg.Within(l.err.Error()) + ")"
		if serverGone(l.err) {
			msg = "no tmux server runs on this socket, so the call will fail"
		}
		return line{txt(t.Name + ": " + msg)}, nil, false
	}
	scope := scopeOf(args)
	props, _ := t.inSchema()["properties"].(map[string]any)
	_, paneTool := props["pane_id"]
	switch {
	case t.Name == "kill_server":
		return d.serverText(c, sock, l, "kill_server: kill the tmux server and all its sessions")
	case t.Name == "kill_session":
		return d.sessionText(c, sock, l, scope, "kill_session: kill session")
	case t.Name == "kill_window":
		return d.windowText(c, sock, l, scope, "kill_window: kill window")
	case t.Name == "kill_pane":
		return d.paneText(c, sock, l, scope, "kill_pane: kill pane")
	case t.Name == "swap_pane":
		s := func(k string) string { v, _ := args[k].(string); return v }
		h1, b1, _ := d.paneText(c, sock, l, paneScope{paneID: s("source_pane_id")}, "swap pane")
		h2, b2, _ := d.paneText(c, sock, l, paneScope{paneID: s("target_pane_id")}, "with pane")
		return line{txt("swap_pane:")}, slices.Concat([]line{h1}, b1, []line{h2}, b2), false
	case t.Name == "send_keys_batch":
		return d.keysBatchText(c, sock, l, args)
	case paneTool:
		return d.paneText(c, sock, l, scope, t.Name+": pane")
	case scope.windowID != "" || scope.windowIndex != "":
		return d.windowText(c, sock, l, scope, t.Name+": window")
	case scope.sessionID != "" || scope.sessionName != "":
		return d.sessionText(c, sock, l, scope, t.Name+": session")
	}
	return line{txt(t.Name)}, nil, false
}

// serverGone reports tmux's answers for a socket no server listens on.
func serverGone(err error) bool {
	return errors.Is(err, tmux.ErrNoServer)
}

// sessionName and windowName name objects as a person knows
// them: by name, with the id in brackets.
func (l *listing) sessionName(r tmux.Row) string {
	s := errarg.Quoted(r["session_name"]) + " (" + r["session_id"]
	if atoi(r["session_attached"])-l.ours[r["session_id"]] > 0 {
		s += ", attached: someone may be looking at it"
	}
	return s + ")"
}

func windowName(r tmux.Row) string {
	return r["window_index"] + " " + errarg.Quoted(r["window_name"]) + " (" + r["window_id"] + ")"
}

// panes returns the rows of window id w, each pane once.
func panesOf(rows []tmux.Row, keep func(tmux.Row) bool) []tmux.Row {
	var out []tmux.Row
	seen := map[string]bool{}
	for _, r := range rows {
		if keep(r) && !seen[r["pane_id"]] {
			seen[r["pane_id"]] = true
			out = append(out, r)
		}
	}
	return out
}

// paneList is `%1 vim, waiting for input; %2 make, running for 3 s`,
// capped at confirmMaxPanes.
func (d *describer) paneList(c *Call, sock tmux.Socket, l *listing, panes []tmux.Row) string {
	var parts []string
	for i, p := range panes {
		if i == confirmMaxPanes {
			parts = append(parts, fmt.Sprintf("and %d more panes", len(panes)-i))
			break
		}
		parts = append(parts, p["pane_id"]+" "+d.program(c, sock, l, p).text)
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// windowLines lists a session's windows, each with its panes.
func (d *describer) windowLines(c *Call, sock tmux.Socket, l *listing, sessionID string) []line {
	var windows []string
	byWindow := map[string][]tmux.Row{}
	for _, r := range l.rows {
		if r["session_id"] != sessionID {
			continue
		}
		w := r["window_id"]
		if _, ok := byWindow[w]; !ok {
			windows = append(windows, w)
		}
		byWindow[w] = append(byWindow[w], r)
	}
	var out []line
	for i, w := range windows {
		if i == confirmMaxWindows {
			out = append(out, line{txt(fmt.Sprintf("and %d more windows", len(windows)-i))})
			break
		}
		panes := byWindow[w]
		out = append(out, line{txt("window " + windowName(panes[0]) + ": " + d.paneList(c, sock, l, panes))})
	}
	return out
}

func (d *describer) serverText(c *Call, sock tmux.Socket, l *listing, verb string) (line, []line, bool) {
	var sessions []tmux.Row
	seen := map[string]bool{}
	for _, r := range l.rows {
		if !seen[r["session_id"]] {
			seen[r["session_id"]] = true
			sessions = append(sessions, r)
		}
	}
	head := line{txt(fmt.Sprintf("%s (%s):", verb, plural(len(sessions), "session", "sessions")))}
	var body []line
	for i, s := range sessions {
		if i == confirmMaxSessions {
			body = append(body, line{txt(fmt.Sprintf("and %d more sessions", len(sessions)-i))})
			break
		}
		ws := d.windowLines(c, sock, l, s["session_id"])
		body = append(body, line{txt("session " + l.sessionName(s) + ", " + plural(len(ws), "window", "windows") + ":")})
		for _, w := range ws {
			body = append(body, append(line{txt("  ")}, w...))
		}
	}
	return head, body, false
}

func (d *describer) sessionText(c *Call, sock tmux.Socket, l *listing, scope paneScope, verb string) (line, []line, bool) {
	var s tmux.Row
	for _, r := range l.rows {
		if (scope.sessionID != "" || scope.sessionName != "") && scope.session(r) {
			s = r
			break
		}
	}
	if s == nil {
		name := scope.sessionID
		if name == "" {
			name = errarg.Quoted(scope.sessionName)
		}
		return line{txt(verb + " " + name + ": no such session on this server, so the call will fail")}, nil, false
	}
	ws := d.windowLines(c, sock, l, s["session_id"])
	return line{txt(fmt.Sprintf("%s %s and its %s:", verb, l.sessionName(s), plural(len(ws), "window", "windows")))}, ws, false
}

func (d *describer) windowText(c *Call, sock tmux.Socket, l *listing, scope paneScope, verb string) (line, []line, bool) {
	keep := func(r tmux.Row) bool { return r["window_id"] == scope.windowID }
	if scope.windowID == "" {
		keep = func(r tmux.Row) bool { return r["window_index"] == scope.windowIndex && scope.session(r) }
	}
	panes := panesOf(l.rows, keep)
	if len(panes) == 0 {
		name := scope.windowID
		if name == "" {
			name = "index " + scope.windowIndex
		}
		return line{txt(verb + " " + name + ": no such window on this server, so the call will fail")}, nil, false
	}
	var in []string
	for _, r := range l.rows {
		if r["window_id"] == panes[0]["window_id"] && !slices.Contains(in, l.sessionName(r)) {
			in = append(in, l.sessionName(r)) // a window linked into several sessions
		}
	}
	return line{txt(fmt.Sprintf("%s %s of session %s and its %s: %s", verb, windowName(panes[0]), strings.Join(in, ", "),
		plural(len(panes), "pane", "panes"), d.paneList(c, sock, l, panes)))}, nil, false
}

// paneText names one pane with what runs in it. A target that is not a
// pane id is resolved as the tools resolve it (resolvePane): the first pane
// of the window or session.
func (d *describer) paneText(c *Call, sock tmux.Socket, l *listing, scope paneScope, verb string) (line, []line, bool) {
	var keep func(tmux.Row) bool
	how := ""
	switch {
	case scope.paneID != "":
		keep = func(r tmux.Row) bool { return r["pane_id"] == scope.paneID }
	case scope.windowID != "":
		keep, how = func(r tmux.Row) bool { return r["window_id"] == scope.windowID }, " (the first of window "+scope.windowID+")"
	case scope.sessionID != "" || scope.sessionName != "":
		keep, how = scope.session, " (the first of its session)"
	default:
		return line{txt(verb + ": tmux's current pane (no target given)")}, nil, false
	}
	panes := panesOf(l.rows, keep)
	if len(panes) == 0 {
		name := scope.paneID
		if name == "" {
			name = "in " + firstNonEmpty(scope.windowID, scope.sessionID, errarg.Quoted(scope.sessionName))
		}
		return line{txt(verb + " " + name + ": no such pane on this server, so the call will fail")}, nil, false
	}
	p := panes[0]
	prog := d.program(c, sock, l, p)
	return line{txt(fmt.Sprintf("%s %s%s in window %s of session %s: %s", verb, p["pane_id"], how, windowName(p), l.sessionName(p), prog.text))}, nil, prog.secret
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" && s != `""` {
			return s
		}
	}
	return ""
}

// keysBatchText is send_keys_batch: each operation's pane and keys.
func (d *describer) keysBatchText(c *Call, sock tmux.Socket, l *listing, args map[string]any) (line, []line, bool) {
	ops, _ := args["operations"].([]any)
	var body []line
	for i, op := range ops {
		m, _ := op.(map[string]any)
		h, _, secret := d.paneText(c, sock, l, scopeOf(m), "pane")
		keys, _ := m["keys"].(string)
		k := line{txt(fmt.Sprintf("%d) ", i+1))}
		k = append(k, h...)
		k = append(k, txt("; keys to type: "), seg{text: keys, typed: true, secret: secret})
		if m["enter"] != false {
			k = append(k, txt(", then Enter"))
		}
		body = append(body, k)
	}
	return line{txt(fmt.Sprintf("send_keys_batch: keys into %s, in order:", plural(len(ops), "pane", "panes")))}, body, false
}
