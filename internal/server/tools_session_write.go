package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/scope"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, sessionWriteTools) }

// sessArgs is the reference's session target (ST): session_id wins over
// session_name; with neither, tools that fall back use the first session.
type sessArgs struct {
	SessionName *string `json:"session_name"`
	SessionID   *string `json:"session_id"`
}

type createSessionArgs struct {
	SessionName    *string      `json:"session_name" desc:"Omitted: tmux picks one. No ':' or '.'."`
	WindowName     *string      `json:"window_name" doc:"Name for the session's first window."`
	StartDirectory *string      `json:"start_directory" desc:"Existing directory; ~ expands."`
	X              *int         `json:"x" desc:"Columns."`
	Y              *int         `json:"y" desc:"Rows."`
	Environment    StringMapArg `json:"environment" desc:"Mapping or JSON string, kept in the session environment for later panes. Visible to ps: no secrets."`
	SocketArgs
	SuppressPersistentHistory bool `json:"suppress_persistent_history" default:"false" desc:"Keep its shells' history off disk (HISTFILE='', fish private mode). Best effort."`
}

type renameSessionArgs struct {
	NewName string `json:"new_name" desc:"No ':' or '.'."`
	sessArgs
	SocketArgs
}

type killSessionArgs struct {
	sessArgs
	SocketArgs
}

type killServerArgs struct {
	SocketArgs
}

func sessionWriteTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "create_session", Title: "Create tmux Session", Toolset: "session", Tier: config.Mutating, Preset: CRE,
			Description: "Create a detached session (starting the server if needed); returns it with its first pane's id. Use create_window to add a window to an existing session.",
		}, createSession),
		define(Tool{
			Name: "rename_session", Title: "Rename tmux Session", Toolset: "session", Tier: config.Mutating, Preset: MUT,
			Description: "Rename a session (by session_id or session_name, else the first) and return it. For a window use rename_window.",
		}, renameSession),
		define(Tool{
			Name: "kill_session", Title: "Kill tmux Session", Toolset: "session", Tier: config.Destructive, Preset: DES,
			Description: "Kill a session and all its windows, by session_name or session_id. Refuses the session this server runs in. To end one window use kill_window.",
		}, killSession),
		define(Tool{
			Name: "kill_server", Title: "Kill tmux Server", Toolset: "server", Tier: config.Destructive, Preset: DES,
			Description: "Kill the tmux server on the selected socket and all its sessions; refuses the one this server runs in. To end one session use kill_session.",
		}, killServer),
	}
}

func createSession(ctx context.Context, c *Call, a createSessionArgs) (SessionInfo, error) {
	name := str(a.SessionName)
	if name != "" {
		if err := checkSessionName("session_name", name); err != nil {
			return SessionInfo{}, err
		}
	}
	env, err := spawnEnv(a.Environment, a.SuppressPersistentHistory)
	if err != nil {
		return SessionInfo{}, err
	}
	dir, err := startDirectory(a.StartDirectory, c.host != "")
	if err != nil {
		return SessionInfo{}, err
	}
	cmd := tmux.Command{"new-session", "-d", "-P", "-F", tmux.Format(sessionFields...)}
	if name != "" {
		cmd = append(cmd, "-s", tmux.LiteralFormat(name, false))
	}
	if wn := str(a.WindowName); wn != "" {
		cmd = append(cmd, "-n", tmux.LiteralFormat(wn, false))
	}
	if dir != "" {
		cmd = append(cmd, "-c", tmux.LiteralFormat(dir, false))
	}
	for _, d := range []struct {
		flag, arg string
		v         *int
	}{{"-x", "x", a.X}, {"-y", "y", a.Y}} {
		if d.v == nil {
			continue
		}
		if *d.v < 1 || *d.v > 10000 {
			return SessionInfo{}, expectedf("%s must be between 1 and 10000", d.arg)
		}
		cmd = append(cmd, d.flag, strconv.Itoa(*d.v))
	}
	cmd = append(cmd, env...)
	if err := c.checkRemoteDir(ctx, dir); err != nil {
		return SessionInfo{}, err
	}
	// The session carries its creator's identity (scope.OwnerOption), in
	// the same round trip when it has a name to target.
	sock := c.Socket(a.SocketArgs)
	cmds := []tmux.Command{cmd}
	if name != "" {
		t, _ := tmux.SessionTarget("", name)
		cmds = append(cmds, ownerMark(ctx, t))
	}
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return SessionInfo{}, sessionExists(err, name)
	}
	r, err := oneRow(outs[0], sessionFields, "session")
	if err != nil {
		return SessionInfo{}, err
	}
	if name == "" {
		if _, err := c.tmux.Run(ctx, sock, ownerMark(ctx, r["session_id"])); err != nil {
			return SessionInfo{}, notFoundAs(err, "session", r["session_id"])
		}
	}
	return sessionInfo(r), nil // a new session: none of our clients is attached to it
}

// ownerMark sets the owner mark of the session at target to the caller's
// identity: a session user option, so it stays with the session in tmux
// (a restart of tmux-mcp keeps it, `tmux show-options` shows it), and a
// caller whose scope is own finds its sessions by it.
func ownerMark(ctx context.Context, target string) tmux.Command {
	return tmux.Command{"set-option", "-t", target, scope.OwnerOption, CallerIdentity(ctx)}
}

func renameSession(ctx context.Context, c *Call, a renameSessionArgs) (SessionInfo, error) {
	if err := checkSessionName("new_name", a.NewName); err != nil {
		return SessionInfo{}, err
	}
	sock := c.Socket(a.SocketArgs)
	st, err := c.sessTarget(ctx, sock, a.sessArgs)
	if err != nil {
		return SessionInfo{}, err
	}
	after := st
	if !strings.HasPrefix(st, "$") {
		after, _ = tmux.SessionTarget("", a.NewName)
	}
	rows, ours, err := c.sessionQuery(ctx, sock, sessionFields,
		tmux.Command{"rename-session", "-t", st, "--", tmux.LiteralFormat(a.NewName, false)},
		tmux.Command{"display-message", "-p", "-t", after, tmux.Format(sessionFields...)})
	if err != nil {
		return SessionInfo{}, sessionExists(sessNotFound(err, a.sessArgs), a.NewName)
	}
	if len(rows) != 1 || rows[0]["session_id"] == "" {
		return SessionInfo{}, &tmux.NotFoundError{What: "session", Detail: "tmux returned no data for it"}
	}
	return sessionInfos(rows, ours)[0], nil
}

func killSession(ctx context.Context, c *Call, a killSessionArgs) (Text, error) {
	st, err := tmux.SessionTarget(str(a.SessionID), str(a.SessionName))
	if err != nil {
		return "", err
	}
	if st == "" {
		return "", expectedf("kill_session needs session_name or session_id; it never falls back to a default session")
	}
	sock := c.Socket(a.SocketArgs)
	fields := []string{"session_id", "session_name"}
	facts := []tmux.Command{
		{"has-session", "-t", st}, // fails on a missing session; display-message would not
		{"display-message", "-p", "-t", st, tmux.Format(fields...)},
	}
	if !c.cfg.Caller.InTmux() {
		// Nothing to guard: facts and kill in one round trip.
		outs, err := c.tmux.Run(ctx, sock, append(facts, tmux.Command{"kill-session", "-t", st})...)
		if err != nil {
			return "", sessNotFound(err, a.sessArgs)
		}
		r, err := oneRow(outs[1], fields, "session")
		if err != nil {
			return "", err
		}
		return Text("Session killed: " + r["session_name"]), nil
	}
	spot, outs, err := c.locateCaller(ctx, sock, facts...)
	if err != nil {
		return "", sessNotFound(err, a.sessArgs)
	}
	r, err := oneRow(outs[1], fields, "session")
	if err != nil {
		return "", err
	}
	if spot.holds("session_id", r["session_id"]) {
		return "", expectedf("Refusing to kill session %s (%s): it contains the pane this MCP server runs in (or that cannot be ruled out). Use a manual tmux command if intended.", r["session_id"], r["session_name"])
	}
	if _, err := c.tmux.Run(ctx, sock, tmux.Command{"kill-session", "-t", r["session_id"]}); err != nil {
		return "", notFoundAs(err, "session", r["session_id"])
	}
	return Text("Session killed: " + r["session_name"]), nil
}

func killServer(ctx context.Context, c *Call, a killServerArgs) (Text, error) {
	sock := c.Socket(a.SocketArgs)
	spot, _, err := c.locateCaller(ctx, sock)
	if err != nil {
		return "", err
	}
	if spot.OnServer {
		return "", expectedf("Refusing to kill the tmux server this MCP server runs in (socket %s), or one that cannot be told apart from it. Use a manual tmux command if intended.", sock)
	}
	if _, err := c.tmux.Run(ctx, sock, tmux.Command{"kill-server"}); err != nil {
		return "", err
	}
	return Text("Server killed successfully"), nil
}

// checkSessionName refuses a name tmux would not keep as given: tmux
// rewrites ':' and '.' to '_' and escapes '$', '\' and control characters,
// so the session would silently get another name than the one asked for.
func checkSessionName(arg, name string) error {
	switch {
	case name == "":
		return badSessionName(expectedf("%s must not be empty", arg))
	case strings.ContainsAny(name, ":."):
		return badSessionName(expectedf("%s %s is not allowed: tmux session names cannot contain ':' or '.' (tmux would rename it to %s)",
			arg, errarg.Quoted(name), errarg.Quoted(strings.NewReplacer(":", "_", ".", "_").Replace(name))))
	case strings.ContainsAny(name, `$\`) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return expectedf("%s must not contain '$', '\\' or control characters (tmux would store them escaped, under another name)", arg)
	}
	return nil
}

// badSessionName types the names libtmux itself refuses (empty, '.' or ':')
// as it does.
func badSessionName(te *ToolError) *ToolError {
	te.Type = typeBadSessionName
	return te
}

// sessionExists maps tmux's "duplicate session" to the reference's
// TmuxSessionExists expected error.
func sessionExists(err error, name string) error {
	var ce *tmux.CommandError
	if errors.As(err, &ce) && strings.Contains(ce.Stderr, "duplicate session") {
		return &ToolError{Msg: "Session already exists: " + errarg.Bare(name), Type: "TmuxSessionExists", Expected: true,
			Suggestion: "Pick another name, or call list_sessions to find the existing session.", Err: err}
	}
	return err
}

// sessNotFound names the session the agent asked for when tmux could not
// find it.
func sessNotFound(err error, s sessArgs) error {
	return notFoundAs(err, "session", sessionLabel(s.SessionID, s.SessionName))
}

// sessTarget resolves a session target to a tmux target ("$N" or
// "=name:"); with neither id nor name it asks tmux for the first session
// (one extra round trip, the reference's fallback). A name that tmux could
// not have created is a not-found error.
func (c *Call) sessTarget(ctx context.Context, sock tmux.Socket, s sessArgs) (string, error) {
	st, err := tmux.SessionTarget(str(s.SessionID), str(s.SessionName))
	if err != nil || st != "" {
		return st, err
	}
	return c.firstSession(ctx, sock)
}

// firstSession returns the id of the first session tmux lists (under a
// scope, the first inside it).
func (c *Call) firstSession(ctx context.Context, sock tmux.Socket) (string, error) {
	if c.scope != nil {
		if s := c.scope.view.first(); s != nil {
			return s.id, nil
		}
		return "", errNoSessionInScope
	}
	outs, err := c.tmux.Run(ctx, sock, tmux.Command{"list-sessions", "-F", "#{session_id}"})
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(outs[0])), "\n")
	if id == "" {
		return "", &tmux.NotFoundError{What: "session", Detail: "the server has no sessions"}
	}
	return id, nil
}

// oneRow parses a single-object answer.
func oneRow(out []byte, fields []string, what string) (tmux.Row, error) {
	rows, err := tmux.ParseRows(out, fields)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || rows[0][fields[0]] == "" {
		return nil, &tmux.NotFoundError{What: what, Detail: "tmux returned no data for it"}
	}
	return rows[0], nil
}
