package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// PaneTarget is the reference's pane target (PT): pane_id wins, then
// window_id, then session_id, then session_name; with none, the first pane
// of the first window of the first session.
type PaneTarget struct {
	PaneID      *string `json:"pane_id"`
	SessionName *string `json:"session_name"`
	SessionID   *string `json:"session_id"`
	WindowID    *string `json:"window_id"`
}

// resolvePane finds the target pane and reads the given fields in one tmux
// round trip. The other targets list their scope and take the first pane
// tmux lists.
func (c *Call) resolvePane(ctx context.Context, sock tmux.Socket, t PaneTarget, fields []string) (tmux.Row, error) {
	if id := str(t.PaneID); id != "" {
		pid, err := tmux.ParsePaneID(id)
		if err != nil {
			return nil, err
		}
		// display-message formats just this pane (list-panes would format
		// every pane of its window). It does not fail on a missing pane, it
		// prints empty fields, so the pane id in the answer is the proof.
		outs, err := c.tmux.Run(ctx, sock, tmux.Command{"display-message", "-p", "-t", string(pid), tmux.Format(withField(fields, "pane_id")...)})
		if err != nil {
			return nil, notFoundAs(err, "pane", id)
		}
		rows, err := tmux.ParseRows(outs[0], withField(fields, "pane_id"))
		if err != nil {
			return nil, err
		}
		if len(rows) == 1 && rows[0]["pane_id"] == id {
			return rows[0], nil
		}
		return nil, &tmux.NotFoundError{What: "pane", Detail: id}
	}
	scope := tmux.PaneScope{WindowID: str(t.WindowID), SessionID: str(t.SessionID), SessionName: str(t.SessionName)}
	return c.firstPane(ctx, sock, scope, fields)
}

// firstPane lists a scope and returns its first pane.
func (c *Call) firstPane(ctx context.Context, sock tmux.Socket, scope tmux.PaneScope, fields []string) (tmux.Row, error) {
	args, err := scope.Target()
	if err != nil {
		return nil, err
	}
	rows, err := c.tmux.Rows(ctx, sock, append(tmux.Command{"list-panes"}, args...), fields)
	if err != nil {
		return nil, notFoundAs(err, scopeKind(scope), scopeName(scope))
	}
	if len(rows) == 0 {
		return nil, &tmux.NotFoundError{What: "session", Detail: "the server has no sessions"}
	}
	return rows[0], nil
}

func scopeKind(s tmux.PaneScope) string {
	switch {
	case s.WindowID != "" || s.WindowIndex != "":
		return "window"
	case s.SessionID != "" || s.SessionName != "":
		return "session"
	}
	return ""
}

func scopeName(s tmux.PaneScope) string {
	switch {
	case s.WindowID != "":
		return s.WindowID
	case s.WindowIndex != "":
		return fmt.Sprintf("index %s in session %s%s", errarg.Bare(s.WindowIndex), s.SessionID, errarg.Bare(s.SessionName))
	case s.SessionID != "":
		return s.SessionID
	}
	return s.SessionName
}

// notFoundAs turns tmux's "can't find ..." into a NotFoundError that names
// the kind of object the agent asked for, so the hint points at the right
// discovery tool. Other errors pass through.
func notFoundAs(err error, what, name string) error {
	var nf *tmux.NotFoundError
	if errors.As(err, &nf) {
		return err
	}
	if tmuxNotFound(err) {
		if what == "" {
			return err
		}
		return &tmux.NotFoundError{What: what, Detail: errarg.Bare(name)}
	}
	return err
}

func tmuxNotFound(err error) bool { return notFoundMentions(err, "") }

// notFoundMentions reports tmux's "not found" error whose message mentions
// word, for the tools that name what failed from tmux's wording.
func notFoundMentions(err error, word string) bool {
	var ce *tmux.CommandError
	return errors.As(err, &ce) && ce.Kind == tmux.ErrNotFound && strings.Contains(ce.Stderr, word)
}

func withField(fields []string, f string) []string {
	for _, x := range fields {
		if x == f {
			return fields
		}
	}
	return append(append([]string{}, fields...), f)
}

// absPath resolves a path argument before it reaches tmux, which would
// resolve it against its own directory instead: "~" and "~/x" expand to the
// home directory and a relative path resolves against this process's
// working directory.
//
// On a remote host (remote true) the path is that host's: nothing here can
// resolve it, so it must be absolute and is passed on as given.
func absPath(name, p string, remote bool) (string, error) {
	if remote {
		if !strings.HasPrefix(p, "/") {
			return "", expectedf("%s: on a remote host the path must be absolute (it is the host's, not resolved here)", name)
		}
		return p, nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", expectedf("%s: cannot expand ~: %s", name, errarg.Within(err.Error(), p))
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", expectedf("%s: %s", name, errarg.Within(err.Error(), p))
	}
	return abs, nil
}

// startDirectory resolves a start_directory argument (see absPath), which
// must be an existing directory: tmux would otherwise silently start in
// another one. A remote host's directory is checked on the host, by
// checkRemoteDir once the call's other arguments are valid.
func startDirectory(p *string, remote bool) (string, error) {
	d := str(p)
	if d == "" {
		return "", nil
	}
	abs, err := absPath("start_directory", d, remote)
	if err != nil || remote {
		return abs, err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", expectedf("start_directory %s is not an existing directory", errarg.Bare(abs))
	}
	return abs, nil
}

// checkRemoteDir is startDirectory's existence check for a remote host's
// directory (dir as startDirectory returned it; "" is no directory): it
// runs on the host, over the host's connection, and answers with the
// local check's error, naming the host. It costs the spawn one ssh
// round trip, so callers run it after everything checked locally.
func (c *Call) checkRemoteDir(ctx context.Context, dir string) error {
	if c.host == "" || dir == "" {
		return nil
	}
	chk, ok := c.tmux.Runner.(interface {
		CheckRemoteDir(ctx context.Context, path string) error
	})
	if !ok {
		return fmt.Errorf("host %s: its runner cannot check a start_directory", c.host)
	}
	err := chk.CheckRemoteDir(ctx, dir)
	if errors.Is(err, tmux.ErrNotRemoteDir) {
		return expectedf("start_directory %s is not an existing directory on host %s", errarg.Bare(dir), c.host)
	}
	return err
}

// rowFor picks the row of one pane from a list-panes answer (list-panes -t
// a pane lists its whole window).
func rowFor(out []byte, fields []string, pane string) (tmux.Row, error) {
	rows, err := tmux.ParseRows(out, fields)
	if err != nil {
		return nil, err
	}
	return paneRow(rows, pane)
}

// paneRow is rowFor for rows already parsed.
func paneRow(rows []tmux.Row, pane string) (tmux.Row, error) {
	for _, r := range rows {
		if r["pane_id"] == pane {
			return r, nil
		}
	}
	return nil, &tmux.NotFoundError{What: "pane", Detail: pane}
}

// deadPane is the error of a tool that needs a live program in a pane whose
// program exited (the pane stays because of remain-on-exit).
func deadPane(pane string) error {
	return expectedf("pane %s is dead (its program exited); respawn_pane restarts it", pane)
}

// targetPaneID turns a pane target into a pane id. A pane_id is only
// validated (the caller's own command checks that it exists, in its single
// round trip); the other targets cost one list-panes to find their first
// pane.
func (c *Call) targetPaneID(ctx context.Context, sock tmux.Socket, t PaneTarget) (string, error) {
	if id := str(t.PaneID); id != "" {
		pid, err := tmux.ParsePaneID(id)
		if err != nil {
			return "", err
		}
		return string(pid), nil
	}
	r, err := c.firstPane(ctx, sock, tmux.PaneScope{WindowID: str(t.WindowID), SessionID: str(t.SessionID), SessionName: str(t.SessionName)}, []string{"pane_id"})
	if err != nil {
		return "", err
	}
	return r["pane_id"], nil
}
