package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/scope"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Scope (issue 23 item 1): a caller confined to some sessions sees and
// touches nothing else, through every tool, batch row, resource,
// subscription and completion.
//
// How it holds, in one place, without each tool knowing:
//
//   - Every tool has a rule in scopeRules (scope_rules.go); a tool without
//     one is refused under a scope, so a tool added later is closed until
//     someone decides how it is confined.
//   - Before a scoped call runs (safeCall, which direct calls, batch rows,
//     resources and the CLI all go through), the call's server is read in
//     one round trip (two with own: the owner marks): every session, window
//     and pane, and which are inside. A window is inside when every session
//     holding it is: tmux names a window's sessions in its answers, so a
//     window linked into an outside session would show that session.
//   - Every argument that names an object (pane_id, window_id, session_id,
//     session_name, the option tools' target, move_window's
//     destination_session, swap_pane's two panes, send_keys_batch's rows,
//     a capture_since cursor) and names one outside is replaced by a
//     phantom: an id or name of the same kind that no tmux object has. The
//     tool then runs as it would for a missing object, and the phantom is
//     put back into its answer: an outside object answers exactly as a
//     missing one does, error type, wording, order of checks and all. No
//     oracle, and no tool has to be taught what "not found" looks like.
//   - A call with no target, which tmux would point at the server's first
//     session, is given the first session inside instead.
//   - Listings leave outside objects out at their source (scopeRows), so
//     counts, pages and filters see only what is inside.
//   - What reaches the whole server (kill_server, list_servers, global and
//     server options, the global environment) is refused.

// StdioIdentity is the identity of the one client of a stdio server (and
// of the call subcommand): the owner mark of the sessions it creates.
const StdioIdentity = "stdio"

// CallerIdentity is who the caller of a request is, for the owner mark of
// the sessions it creates and the own scope: the authenticated client's
// name (a token's name, "oauth:SUBJECT"), else StdioIdentity. It is the
// audit log's "client" for authenticated callers: one notion of identity.
func CallerIdentity(ctx context.Context) string {
	if c, ok := ClientFrom(ctx); ok && c.Name != "" {
		return c.Name
	}
	return StdioIdentity
}

// callerScope is the scope of the caller in ctx: the client's own when its
// credentials carry one, else the server's configured scope. A scope that
// does not parse (config and the tokens file are checked at load, so this
// is a bug) admits nothing.
func (s *Server) callerScope(ctx context.Context) scope.Scope {
	raw := s.cfg.Scope
	if c, ok := ClientFrom(ctx); ok && c.Scope != "" {
		raw = c.Scope
	}
	if raw == "" {
		return scope.Scope{}
	}
	if v, ok := s.scopes.Load(raw); ok {
		return v.(scope.Scope)
	}
	sc, err := scope.Parse(raw)
	if err != nil {
		s.log.Error("unreadable scope: the caller is confined to nothing", "error", err)
		sc = scope.Nothing
	}
	s.scopes.Store(raw, sc)
	return sc
}

// callScope is one scoped call's confinement: its scope and identity,
// the view of its server (loaded once per call, before the tool runs), and
// the phantoms put in place of outside objects.
type callScope struct {
	sc       scope.Scope
	identity string
	view     *scopeView
	phantoms []phantom
}

// phantom is a stand-in for an outside object of a kind (see hide): fake
// replaced orig in the arguments and is put back as orig in the answer.
type phantom struct {
	kind       byte
	fake, orig string
}

// phantomSeed makes this process's phantom session names: a session can
// be given any name, but not one it cannot know.
var phantomSeed = sync.OnceValue(func() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
})

// phantomFor returns the phantom of an outside object (the same one each
// time within the call, so arguments that must agree still agree). Ids
// get a number far beyond any tmux will reach (tmux numbers from 0 and
// never reuses): fixed width, so no phantom is a prefix of another.
func (cs *callScope) phantomFor(kind byte, orig string) string {
	for _, p := range cs.phantoms {
		if p.orig == orig && p.kind == kind {
			return p.fake
		}
	}
	n := len(cs.phantoms) + 1
	var fake string
	switch kind {
	case 'n':
		fake = fmt.Sprintf("tmux-mcp-outside-%s-%06d", phantomSeed(), n)
	case 'i': // a window index: tmux takes at most 9 digits here (IsDigits)
		fake = fmt.Sprintf("98765%04d", n)
	default:
		fake = fmt.Sprintf("%c4%09d", kind, n)
	}
	cs.phantoms = append(cs.phantoms, phantom{kind, fake, orig})
	return fake
}

// scopeView is what a scoped call knows of its tmux server: every
// session, window and pane, and which are inside.
type scopeView struct {
	sessions []*viewSession          // tmux's order
	byID     map[string]*viewSession // session id
	byName   map[string]*viewSession
	windows  map[string]bool   // window id -> inside
	panes    map[string]string // pane id -> window id
}

type viewSession struct {
	id, name, owner string
	in              bool
	// mixed: the session holds a window that is outside (linked into an
	// outside session too).
	mixed   bool
	indexes map[string]string // window index -> window id
}

// loadScopeView reads sock's sessions, windows and panes (one round trip)
// and, for own, the owner mark of each session not already listed (one
// more). A server that is not running has nothing, so nothing is outside.
func (c *Call) loadScopeView(ctx context.Context, sock tmux.Socket, sc scope.Scope, identity string) (*scopeView, error) {
	v := &scopeView{byID: map[string]*viewSession{}, byName: map[string]*viewSession{}, windows: map[string]bool{}, panes: map[string]string{}}
	fields := []string{"session_id", "window_id", "window_index", "pane_id", "session_name"}
	rows, err := c.tmux.Rows(ctx, sock, tmux.Command{"list-panes", "-a"}, fields)
	if errors.Is(err, tmux.ErrNoServer) {
		return v, nil
	}
	if err != nil {
		return nil, err
	}
	holders := map[string][]*viewSession{}
	for _, r := range rows {
		s := v.byID[r["session_id"]]
		if s == nil {
			s = &viewSession{id: r["session_id"], name: r["session_name"], indexes: map[string]string{}}
			v.byID[s.id], v.byName[s.name] = s, s
			v.sessions = append(v.sessions, s)
		}
		w := r["window_id"]
		s.indexes[r["window_index"]] = w
		if len(holders[w]) == 0 || holders[w][len(holders[w])-1] != s {
			holders[w] = append(holders[w], s)
		}
		v.panes[r["pane_id"]] = w
	}
	if sc.Own {
		if err := c.readOwners(ctx, sock, sc, v.sessions); err != nil {
			return nil, err
		}
	}
	for _, s := range v.sessions {
		s.in = sc.Admits(s.id, s.name, s.owner, identity)
	}
	for w, ss := range holders {
		in := true
		for _, s := range ss {
			in = in && s.in
		}
		v.windows[w] = in
		for _, s := range ss {
			s.mixed = s.mixed || !in
		}
	}
	return v, nil
}

// readOwners reads the owner mark of each session the scope does not list
// by name or id, in one round trip. It reads each session's own value
// (show-options -t): a format's #{@option} would fall back to a server,
// window or pane value of the same name. A session that vanished meanwhile
// keeps no owner (outside), and the rest are read again without it.
func (c *Call) readOwners(ctx context.Context, sock tmux.Socket, sc scope.Scope, sessions []*viewSession) error {
	var todo []*viewSession
	for _, s := range sessions {
		if !sc.Listed(s.id, s.name) {
			todo = append(todo, s)
		}
	}
	for len(todo) > 0 {
		cmds := make([]tmux.Command, len(todo))
		for i, s := range todo {
			cmds[i] = tmux.Command{"show-options", "-q", "-v", "-t", s.id, scope.OwnerOption}
		}
		outs, err := c.tmux.Run(ctx, sock, cmds...)
		for i, o := range outs {
			todo[i].owner = strings.TrimSpace(string(o))
		}
		if err == nil {
			return nil
		}
		if !tmuxNotFound(err) {
			return err
		}
		todo = todo[min(len(outs)+1, len(todo)):]
	}
	return nil
}

// first is the first session inside, in tmux's order: the default target
// of a scoped call that names none.
func (v *scopeView) first() *viewSession {
	for _, s := range v.sessions {
		if s.in {
			return s
		}
	}
	return nil
}

// errNoSessionInScope answers a call that would fall back to the first
// session when no session is inside.
var errNoSessionInScope = &tmux.NotFoundError{What: "session", Detail: "no session is in this caller's scope (create_session makes one)"}

// canonicalID is an id as tmux reads it: tmux takes "%05" as %5, so an
// id is compared by its number. ok is false for what tmux cannot read as
// an id of that kind (it is left to the tool, which refuses it or finds
// nothing).
func canonicalID(sigil byte, s string) (string, bool) {
	if len(s) < 2 || s[0] != sigil {
		return "", false
	}
	n, err := strconv.ParseUint(s[1:], 10, 32)
	if err != nil || strings.ContainsAny(s[1:], "+-") {
		return "", false
	}
	return string(sigil) + strconv.FormatUint(n, 10), true
}

// outsidePane reports a pane that exists and is outside.
func (v *scopeView) outsidePane(id string) bool {
	cid, ok := canonicalID('%', id)
	if !ok {
		return false
	}
	w, exists := v.panes[cid]
	return exists && !v.windows[w]
}

func (v *scopeView) paneIn(id string) bool {
	w, ok := v.panes[id]
	return ok && v.windows[w]
}

func (v *scopeView) outsideWindow(id string) bool {
	cid, ok := canonicalID('@', id)
	if !ok {
		return false
	}
	in, exists := v.windows[cid]
	return exists && !in
}

func (v *scopeView) outsideSessionID(id string) bool {
	cid, ok := canonicalID('$', id)
	if !ok {
		return false
	}
	s := v.byID[cid]
	return s != nil && !s.in
}

func (v *scopeView) outsideSessionName(name string) bool {
	s := v.byName[name]
	return s != nil && !s.in
}

// hide replaces args[key] by a phantom when it names an outside object of
// the given kind: 'p' pane, 'w' window, 's' session id, 'n' session name,
// 'd' a session by id or name (move_window's destination_session).
func (cs *callScope) hide(args map[string]any, key string, kind byte) {
	v, _ := args[key].(string)
	if v == "" {
		return
	}
	switch kind {
	case 'p':
		if cs.view.outsidePane(v) {
			args[key] = cs.phantomFor('%', v)
		}
	case 'w':
		if cs.view.outsideWindow(v) {
			args[key] = cs.phantomFor('@', v)
		}
	case 's':
		if cs.view.outsideSessionID(v) {
			args[key] = cs.phantomFor('$', v)
		}
	case 'n':
		if cs.view.outsideSessionName(v) {
			args[key] = cs.phantomFor('n', v)
		}
	case 'd':
		if strings.HasPrefix(v, "$") {
			cs.hide(args, key, 's')
		} else {
			cs.hide(args, key, 'n')
		}
	}
}

// targetKeys are the arguments that name a pane, window or session, with
// the kind of object each names.
var targetKeys = []struct {
	key  string
	kind byte
}{{"pane_id", 'p'}, {"source_pane_id", 'p'}, {"target_pane_id", 'p'}, {"window_id", 'w'}, {"session_id", 's'},
	{"session_name", 'n'}, {"destination_session", 'd'}}

// hideTargets phantoms every outside object args name.
func (cs *callScope) hideTargets(args map[string]any) {
	for _, k := range targetKeys {
		cs.hide(args, k.key, k.kind)
	}
}

// namesTarget reports whether args name a pane, window or session (a
// capture_since cursor names its pane): a call that names none falls back
// to the server's first session.
func namesTarget(args map[string]any) bool {
	for _, k := range []string{"pane_id", "window_id", "session_id", "session_name", "cursor"} {
		if v, _ := args[k].(string); v != "" {
			return true
		}
	}
	return false
}

// defaultSession points a call that names no target at the first session
// inside (the tools' own fallback, the server's first session, may be
// outside). props are the tool's argument schema properties.
func (cs *callScope) defaultSession(args, props map[string]any) error {
	if namesTarget(args) {
		return nil
	}
	first := cs.view.first()
	if first == nil {
		return errNoSessionInScope
	}
	if _, ok := props["session_id"]; ok {
		args["session_id"] = first.id
	} else if _, ok := props["session_name"]; ok {
		args["session_name"] = first.name
	}
	return nil
}

// targetSession is the session args name when they name no pane or
// window (nil for none, or one the view does not hold).
func (cs *callScope) targetSession(args map[string]any) *viewSession {
	for _, k := range []string{"pane_id", "window_id"} {
		if v, _ := args[k].(string); v != "" {
			return nil
		}
	}
	return cs.view.sessionArg(args)
}

// sessionArg is the session args name by session_id, else session_name
// (nil for none, or one the view does not hold).
func (v *scopeView) sessionArg(args map[string]any) *viewSession {
	if id, _ := args["session_id"].(string); id != "" {
		if cid, ok := canonicalID('$', id); ok {
			return v.byID[cid]
		}
	} else if name, _ := args["session_name"].(string); name != "" {
		return v.byName[name]
	}
	return nil
}

// hideIndex hides a window_index naming an outside window (one a person
// linked into an inside session from an outside one) like any target.
func (cs *callScope) hideIndex(args map[string]any) {
	idx, _ := args["window_index"].(string)
	if s := cs.targetSession(args); idx != "" && s != nil && s.in {
		if w, ok := s.indexes[idx]; ok && !cs.view.windows[w] {
			args["window_index"] = cs.phantomFor('i', idx)
		}
	}
}

// windowOfSession refuses a call that names a session holding an outside
// window and leaves the window to tmux (its first or current one, or the
// first pane of its first): tmux could pick that window.
func (cs *callScope) windowOfSession(tool string, args map[string]any) error {
	if idx, _ := args["window_index"].(string); idx != "" {
		return nil
	}
	s := cs.targetSession(args)
	if s == nil || !s.in || !s.mixed {
		return nil
	}
	return scopeRefused("session %s holds a window shared with a session outside this caller's scope, and %s would let tmux pick the window: name window_id, window_index or pane_id", s.id, tool)
}

// scopeRefused is the answer of a tool, or of one use of a tool, that
// reaches beyond the caller's sessions.
func scopeRefused(format string, a ...any) *ToolError {
	te := expectedf(format, a...)
	te.Type = typeOutOfScope
	te.Suggestion = "This server confines you to some tmux sessions (its scope); only they, their windows and their panes can be reached."
	return te
}

// scopeRefusal is applyScope's refusal of a tool itself (no rule, or one
// that reaches the whole server), which needs no tmux: invoke asks it
// before a question is put to the person (confirm.go), who is not asked
// about a call that will not run.
func (c *Call) scopeRefusal(ctx context.Context, t *Tool) error {
	if c.callerScope(ctx).None() {
		return nil
	}
	rule, ok := scopeRules[t.Name]
	switch {
	case !ok:
		return scopeRefused("%s has no rule confining it to this caller's sessions, so it is refused while a scope is set", t.Name)
	case rule.refuse != "":
		return scopeRefused("%s is refused while a scope is set: %s", t.Name, rule.refuse)
	}
	return nil
}

// applyScope confines one call (see the top of this file): it returns the
// arguments to run the tool with, and fix, which puts outside objects back
// into the answer. With no scope it costs nothing and changes nothing.
func (c *Call) applyScope(ctx context.Context, t *Tool, args map[string]any) (map[string]any, func(*mcp.CallToolResult, error) (*mcp.CallToolResult, error), error) {
	sc := c.callerScope(ctx)
	if sc.None() {
		return args, nil, nil
	}
	if err := c.scopeRefusal(ctx, t); err != nil {
		return nil, nil, err
	}
	rule := scopeRules[t.Name]
	if rule.free {
		return args, nil, nil
	}
	cs := &callScope{sc: sc, identity: CallerIdentity(ctx)}
	view, err := c.loadScopeView(ctx, c.Socket(socketArgsOf(args)), sc, cs.identity)
	if err != nil {
		return nil, nil, err
	}
	cs.view, c.scope = view, cs
	args = maps.Clone(args)
	if !rule.names {
		cs.hideTargets(args)
	}
	props, _ := t.inSchema()["properties"].(map[string]any)
	if rule.first {
		if err := cs.defaultSession(args, props); err != nil {
			return nil, nil, err
		}
	}
	cs.hideIndex(args)
	if rule.first && !rule.session {
		if err := cs.windowOfSession(t.Name, args); err != nil {
			return nil, nil, err
		}
	}
	if rule.check != nil {
		if err := rule.check(ctx, c, cs, args, props); err != nil {
			return nil, nil, err
		}
	}
	if len(cs.phantoms) == 0 {
		return args, nil, nil
	}
	return args, cs.restore, nil
}

// socketArgsOf is the socket selection in a call's arguments.
func socketArgsOf(args map[string]any) SocketArgs {
	var a SocketArgs
	if v, ok := args["socket_name"].(string); ok {
		a.SocketName = &v
	}
	if v, ok := args["socket_path"].(string); ok {
		a.SocketPath = &v
	}
	return a
}

// restore puts the outside objects back where their phantoms are in a
// tool's answer, so the caller reads what a missing object would give.
func (cs *callScope) restore(res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		te := *toToolError(err)
		te.Msg, te.Suggestion = cs.unphantom(te.Msg, false), cs.unphantom(te.Suggestion, false)
		return nil, &te
	}
	if res == nil {
		return nil, nil
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc.Text = cs.unphantom(tc.Text, json.Valid([]byte(tc.Text)))
		}
	}
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		res.StructuredContent = json.RawMessage(cs.unphantom(string(sc), true))
	default:
		if raw, err := marshalJSON(sc); err == nil {
			res.StructuredContent = json.RawMessage(cs.unphantom(string(raw), true))
		}
	}
	return res, nil
}

// unphantom replaces each phantom in s by what it stands for, escaped for
// a JSON string when s is JSON.
func (cs *callScope) unphantom(s string, inJSON bool) string {
	for _, p := range cs.phantoms {
		if !strings.Contains(s, p.fake) {
			continue
		}
		orig := p.orig
		if inJSON {
			q, _ := marshalJSON(orig)
			orig = string(q[1 : len(q)-1])
		}
		s = strings.ReplaceAll(s, p.fake, orig)
	}
	return s
}

// scopeActivePanes blanks a session row's active pane (its current
// window's) when that pane is outside the scope: a window linked into an
// inside and an outside session is outside. Unscoped calls keep it.
func (c *Call) scopeActivePanes(rows []tmux.Row) []tmux.Row {
	if c.scope == nil {
		return rows
	}
	for _, r := range rows {
		if p, ok := r["pane_id"]; ok && !c.scope.view.paneIn(p) {
			r["pane_id"] = ""
		}
	}
	return rows
}

// scopeRows keeps the rows of a listing that are inside the call's scope.
// key is the field naming what a row describes: "session_id",
// "window_id" or "pane_id" (a session's row also carries its active pane,
// which does not decide). Unscoped calls keep every row.
func (c *Call) scopeRows(rows []tmux.Row, key string) []tmux.Row {
	if c.scope == nil {
		return rows
	}
	return c.scope.view.keep(rows, key)
}

// keep is scopeRows with this view.
func (v *scopeView) keep(rows []tmux.Row, key string) []tmux.Row {
	out := rows[:0:0]
	for _, r := range rows {
		var keep bool
		switch key {
		case "pane_id":
			keep = v.paneIn(r[key])
		case "window_id":
			keep = v.windows[r[key]]
		default:
			s := v.byID[r[key]]
			keep = s != nil && s.in
		}
		if sid, ok := r["session_id"]; ok && keep && key != "session_id" {
			s := v.byID[sid]
			keep = s != nil && s.in
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}
