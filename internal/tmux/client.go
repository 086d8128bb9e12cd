package tmux

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

// Client asks tmux for facts and gives them back typed. Every method is one
// Runner round trip.
type Client struct {
	Runner Runner
}

// NewExecClient returns a Client that forks the given tmux binary per round
// trip.
func NewExecClient(bin string) *Client {
	return &Client{Runner: &ExecRunner{Bin: bin}}
}

// Run executes commands in one round trip (see Runner).
func (c *Client) Run(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	return c.Runner.Run(ctx, sock, cmds...)
}

// Rows runs one command with "-F Format(fields)" appended and parses its rows.
func (c *Client) Rows(ctx context.Context, sock Socket, cmd Command, fields []string) ([]Row, error) {
	full := append(append(Command{}, cmd...), "-F", Format(fields...))
	outs, err := c.Runner.Run(ctx, sock, full)
	if err != nil {
		return nil, err
	}
	return ParseRows(outs[0], fields)
}

// SessionTarget returns the tmux target for a session given by id or exact
// name. Names get tmux's "=" exact-match prefix and a trailing ":" so that
// they are never read as a window or pane part. tmux itself replaces ":" and
// "." in session names, so a name carrying them cannot exist.
func SessionTarget(id, name string) (string, error) {
	if id != "" {
		sid, err := ParseSessionID(id)
		if err != nil {
			return "", err
		}
		return string(sid), nil
	}
	if name == "" {
		return "", nil
	}
	if strings.ContainsAny(name, ":.") {
		return "", &NotFoundError{What: "session", Detail: errarg.Quoted(name) + " (tmux session names cannot contain ':' or '.')"}
	}
	return "=" + name + ":", nil
}

// PaneScope chooses which panes a listing covers, narrowest first: a window
// (by id, or by index within a session), a session, or the whole server.
type PaneScope struct {
	WindowID    string
	WindowIndex string
	SessionID   string
	SessionName string
}

// Target returns the list-panes arguments for the scope: "-t @2", "-s -t
// =name:" or "-a".
func (s PaneScope) Target() ([]string, error) {
	if s.WindowID != "" {
		wid, err := ParseWindowID(s.WindowID)
		if err != nil {
			return nil, err
		}
		return []string{"-t", string(wid)}, nil
	}
	st, err := SessionTarget(s.SessionID, s.SessionName)
	if err != nil {
		return nil, err
	}
	if s.WindowIndex != "" {
		if !IsDigits(s.WindowIndex) {
			return nil, &BadIDError{Kind: "window", Detail: "window_index must be a non-negative integer"}
		}
		if st == "" {
			return nil, fmt.Errorf("%w: window_index needs session_name or session_id", ErrBadID)
		}
		return []string{"-t", strings.TrimSuffix(st, ":") + ":" + s.WindowIndex}, nil
	}
	if st != "" {
		return []string{"-s", "-t", st}, nil
	}
	return []string{"-a"}, nil
}

// WindowScope chooses which windows a listing covers: a session or the server.
func WindowScope(sessionID, sessionName string) ([]string, error) {
	st, err := SessionTarget(sessionID, sessionName)
	if err != nil {
		return nil, err
	}
	if st == "" {
		return []string{"-a"}, nil
	}
	return []string{"-t", st}, nil
}

// IsDigits reports a non-empty decimal number of at most 9 digits (a window
// or buffer index tmux will take as given).
func IsDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// DedupeBy drops rows whose key field repeats, keeping the first. tmux lists
// a window (and its panes) once for every session that links it, so grouped
// sessions would otherwise make one pane id look ambiguous.
func DedupeBy(rows []Row, key string) []Row {
	seen := make(map[string]bool, len(rows))
	out := rows[:0:0]
	for _, r := range rows {
		k := r[key]
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

// RunChild runs commands as a separate tmux client process, whatever the
// Runner is. Commands that block their client (wait-for) must never share a
// connection with other calls; the child is killed when ctx ends.
func (c *Client) RunChild(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	if cr, ok := c.Runner.(interface{ ExecFallback() Runner }); ok {
		return cr.ExecFallback().Run(ctx, sock, cmds...)
	}
	return c.Runner.Run(ctx, sock, cmds...)
}
