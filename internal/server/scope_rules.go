package server

import (
	"context"
	"maps"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/scope"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// scopeRule says how a tool is confined to the caller's sessions. Every
// argument naming an outside object is hidden (applyScope) whatever the
// rule, unless the tool is free or refused.
type scopeRule struct {
	// refuse is why the tool is refused under a scope: it reaches the
	// whole server.
	refuse string
	// free tools touch no session: channels, the caller's own buffers and
	// runs, prompts, batches (whose rows are confined one by one).
	free bool
	// first: with no target the tool falls back to the server's first
	// session; under a scope it gets the first session inside.
	first bool
	// check runs after the targets are hidden, for what a tool's other
	// arguments can reach.
	check func(ctx context.Context, c *Call, cs *callScope, args, props map[string]any) error
	// names: the tool's session_name names a session to make, not a
	// target, so it is not hidden (create_session).
	names bool
	// session: the tool acts on the session itself (or makes a window in
	// it), never on a window of it tmux would pick.
	session bool
}

var (
	scopeFirst = scopeRule{first: true}
	// scopeExact: the tool needs an exact target and has no fallback.
	scopeExact = scopeRule{}
	// scopeList: a listing, whose rows are kept to the scope at their
	// source (scopeRows); a session it names is hidden like any target.
	scopeList = scopeRule{}
	scopeFree = scopeRule{free: true}
)

// scopeRules is every tool's confinement. A tool missing here is refused
// under a scope (applyScope): a tool added later is closed until it gets
// its rule. TestScopeRulesCoverRegistry keeps the table to real tools.
var scopeRules = map[string]scopeRule{
	// Batches run each row through safeCall, which confines it.
	"call_readonly_tools_batch":    scopeFree,
	"call_mutating_tools_batch":    scopeFree,
	"call_destructive_tools_batch": scopeFree,

	// Panes, windows and sessions by target, falling back to the first.
	"capture_pane":          scopeFirst,
	"clear_pane":            scopeFirst,
	"enter_copy_mode":       scopeFirst,
	"exit_copy_mode":        scopeFirst,
	"find_pane_by_position": scopeFirst,
	"get_pane_info":         scopeFirst,
	"get_session_info":      {first: true, session: true},
	"get_window_info":       scopeFirst,
	"move_window":           scopeFirst,
	"paste_buffer":          scopeFirst,
	"paste_text":            scopeFirst,
	"pipe_pane":             scopeFirst,
	"rename_window":         scopeFirst,
	"resize_pane":           scopeFirst,
	"resize_window":         scopeFirst,
	"run_command":           scopeFirst,
	"select_layout":         scopeFirst,
	"select_pane":           scopeFirst,
	"select_window":         scopeFirst,
	"send_and_wait":         scopeFirst,
	"send_keys":             scopeFirst,
	"set_pane_title":        scopeFirst,
	"snapshot_pane":         scopeFirst,
	"split_window":          scopeFirst,
	"wait_for_prompt":       scopeFirst,
	"wait_for_text":         scopeFirst,
	"create_window":         {first: true, session: true},
	"record_pane":           scopeFirst,
	"capture_since":         {first: true, check: scopeCursor},
	"display_message":       {first: true, check: scopeFormat},
	"rename_session":        {first: true, session: true, check: scopeRename},
	"send_keys_batch":       {check: scopeKeyRows},

	// Exact targets, no fallback.
	"kill_pane":    scopeExact,
	"kill_window":  scopeExact,
	"kill_session": scopeExact,
	"respawn_pane": scopeExact,
	"swap_pane":    scopeExact,

	// Listings.
	"list_sessions":   scopeList,
	"list_windows":    scopeList,
	"list_panes":      scopeList,
	"search_panes":    scopeList,
	"get_server_info": scopeList, // its session_count counts the sessions inside

	"create_session": {check: scopeCreate, names: true},

	// Options, hooks and the environment: a session's, window's or pane's
	// inside; never the global or server ones.
	"show_option":      {check: scopeOption},
	"set_option":       {check: scopeOption},
	"show_hooks":       {check: scopeOption},
	"show_hook":        {check: scopeOption},
	"show_environment": {check: scopeEnvironment},
	"set_environment":  {check: scopeEnvironment},

	// Server-wide.
	"kill_server":  {refuse: "it ends every session of the server"},
	"list_servers": {refuse: "it reports every tmux server and how many sessions each has"},

	// No session: channels are names shared through the server (waiting
	// on or signalling one reaches no pane); buffers, run_ids and
	// recordings are only ever the caller's own (tools_buffers.go,
	// tools_run.go, recordings.go); prompts read nothing from tmux.
	"wait_for_channel": scopeFree,
	"signal_channel":   scopeFree,
	"load_buffer":      scopeFree,
	"show_buffer":      scopeFree,
	"delete_buffer":    scopeFree,
	"wait_for_run":     scopeFree,
	"list_recordings":  scopeFree, // only ever the caller's own (recordings.go)
	"list_prompts":     scopeFree,
	"get_prompt":       scopeFree,
}

// scopeCursor confines a capture_since cursor, which names its pane: a
// cursor of an outside pane becomes one of a phantom pane that this
// server holds no state for, so the call answers as it would for a pane
// that is gone.
func scopeCursor(_ context.Context, _ *Call, cs *callScope, args, _ map[string]any) error {
	text, _ := args["cursor"].(string)
	pane, _, ok := parseCursor(text)
	if !ok || !cs.view.outsidePane(pane) {
		return nil
	}
	args["cursor"] = cursorPrefix + cs.phantomFor('%', pane) + ":" + strings.Repeat("A", 22)
	if p, _ := args["pane_id"].(string); p == pane {
		args["pane_id"] = cs.phantomFor('%', pane)
	}
	return nil
}

// scopeKeyRows confines each row of send_keys_batch as a call of its own.
func scopeKeyRows(_ context.Context, c *Call, cs *callScope, args, _ map[string]any) error {
	ops, _ := args["operations"].([]any)
	out := make([]any, len(ops))
	for i, op := range ops {
		m, ok := op.(map[string]any)
		if !ok {
			out[i] = op
			continue
		}
		m = maps.Clone(m) // a decoded JSON object: never nil
		cs.hideTargets(m)
		if !namesTarget(m) {
			first := cs.view.first()
			if first == nil {
				// A row with nowhere to go: a phantom session answers
				// it as a session that is not there.
				m["session_id"] = cs.phantomFor('$', "(no session in scope)")
			} else {
				m["session_id"] = first.id
			}
		}
		if err := cs.windowOfSession(c.Tool.Name, m); err != nil {
			return err
		}
		out[i] = m
	}
	if ops != nil {
		args["operations"] = out
	}
	return nil
}

// scopeCreate admits a new session only where it will be inside: with own
// any name (the session carries the caller's owner mark), else a name the
// scope lists.
func scopeCreate(_ context.Context, _ *Call, cs *callScope, args, _ map[string]any) error {
	if cs.sc.Own {
		return nil
	}
	name, _ := args["session_name"].(string)
	if name != "" && cs.sc.ListedName(name) {
		return nil
	}
	return scopeRefused("create_session needs a session_name this caller's scope (%s) covers: the session would be outside it", cs.sc)
}

// scopeRename keeps a renamed session inside: one inside by its owner
// mark or id stays inside whatever its name; one inside by name must keep
// a listed name.
func scopeRename(_ context.Context, _ *Call, cs *callScope, args, _ map[string]any) error {
	s := cs.view.sessionArg(args)
	if s == nil || !s.in {
		return nil // a missing (or hidden) session: the tool says so
	}
	newName, _ := args["new_name"].(string)
	if cs.sc.Admits(s.id, newName, s.owner, cs.identity) {
		return nil
	}
	return scopeRefused("rename_session would take session %s out of this caller's scope (%s): pick a name the scope covers", s.id, cs.sc)
}

// scopeEnvironment refuses the global environment (no session named),
// which every new pane of the server inherits.
func scopeEnvironment(_ context.Context, _ *Call, _ *callScope, args, _ map[string]any) error {
	if !namesTarget(args) {
		return scopeRefused("the global environment is the whole server's: name a session (session_name or session_id) inside your scope")
	}
	return nil
}

// scopeOption confines the option and hook tools to a session, window or
// pane inside: global_, scope=server and server options (which tmux
// reaches whatever scope is asked, by name or by a prefix of it) are
// refused, and so is changing the owner mark. An outside target is
// hidden; no target falls back to the first session inside (pinTarget,
// through firstSession).
func scopeOption(ctx context.Context, c *Call, cs *callScope, args, _ map[string]any) error {
	if g, _ := args["global_"].(bool); g {
		return scopeRefused("global options and hooks are the whole server's: name a target inside your scope instead of global_")
	}
	sc, _ := args["scope"].(string)
	if sc == "server" {
		return scopeRefused("server options and hooks are the whole server's")
	}
	switch sc {
	case "session":
		cs.hide(args, "target", 'n')
	case "window":
		cs.hide(args, "target", 'w')
	case "pane":
		cs.hide(args, "target", 'p')
	}
	if _, ok := args["target"].(string); !ok {
		// pinTarget points it at the first session inside, whose current
		// window (and its active pane) tmux picks.
		if first := cs.view.first(); first != nil && first.mixed {
			return scopeRefused("session %s holds a window shared with a session outside this caller's scope, and %s without a target would let tmux pick the window: name a target", first.id, c.Tool.Name)
		}
	}
	name, _ := args["option"].(string)
	if name == "" {
		return nil // a hook tool
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if name == scope.OwnerOption && c.Tool.Name == "set_option" {
		return scopeRefused("%s marks who created a session; it cannot be changed while a scope is set", scope.OwnerOption)
	}
	if strings.HasPrefix(name, "@") || name == "" {
		return nil
	}
	server, err := c.serverOptionNames(ctx, c.Socket(socketArgsOf(args)))
	if err != nil {
		return err
	}
	for _, o := range server {
		if strings.HasPrefix(o, name) {
			return scopeRefused("%s is a server option (or a prefix of one), the whole server's", o)
		}
	}
	return nil
}

// serverOptionNames lists the server options of the tmux on sock: the
// names its show-options -s prints (array options as name[i]).
func (c *Call) serverOptionNames(ctx context.Context, sock tmux.Socket) ([]string, error) {
	outs, err := c.tmux.Run(ctx, sock, tmux.Command{"show-options", "-s"})
	if err != nil {
		if tmuxNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(outs[0]), "\n") {
		f, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if i := strings.IndexByte(f, '['); i >= 0 {
			f = f[:i]
		}
		if f != "" && !seen[f] {
			seen[f] = true
			names = append(names, f)
		}
	}
	return names, nil
}

// scopeFormat keeps display_message to its target: under a scope its
// format may hold only text and plain #{variable}s of the pane, its
// window and its session. A loop (#{S:...}), a modifier (#{N/s:name},
// #{==:...}), a conditional, a #X alias or a style could name or count
// other sessions, and a variable of the server or of a client (the
// control client's session is not the target's) could report an outside
// one.
func scopeFormat(_ context.Context, _ *Call, _ *callScope, args, _ map[string]any) error {
	f, _ := args["format_string"].(string)
	if err := checkScopedFormat(f); err != nil {
		return err
	}
	return nil
}

// scopedFormatPrefixes are the variables a scoped format may use: those of
// the target pane, its window and session, and the pane's modes.
var scopedFormatPrefixes = []string{"pane_", "window_", "session_", "cursor_", "history_", "alternate_", "scroll_",
	"copy_", "selection_", "search_", "mouse_", "insert_", "keypad_", "origin_", "wrap_", "rectangle_"}

func checkScopedFormat(f string) error {
	bad := func(what string) error {
		return scopeRefused("while a scope is set, format_string may hold only text and plain #{variable}s of the target (pane_*, window_*, session_*, cursor_*...): %s is not one", what)
	}
	for i := 0; i < len(f); {
		j := strings.IndexByte(f[i:], '#')
		if j < 0 {
			break
		}
		i += j
		switch {
		case strings.HasPrefix(f[i:], "##"):
			i += 2
		case strings.HasPrefix(f[i:], "#{"):
			k := strings.IndexByte(f[i:], '}')
			if k < 0 {
				return bad("an unclosed #{")
			}
			name := f[i+2 : i+k]
			if !plainVariable(name) {
				return bad("#{" + name + "}")
			}
			i += k + 1
		default:
			return bad("'#' outside #{variable}")
		}
	}
	return nil
}

func plainVariable(name string) bool {
	for _, c := range name {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	if strings.Contains(name, "sessions") || strings.HasPrefix(name, "session_group") {
		return false // other sessions, named or counted
	}
	for _, p := range scopedFormatPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
