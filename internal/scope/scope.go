// Package scope is the confinement of a caller to some tmux sessions: the
// syntax of --scope, TMUX_MCP_SCOPE and the tokens file's fourth field, and
// the rule that decides whether one session is inside. It knows nothing of
// MCP or of how tmux is reached; internal/server enforces it.
//
// A scope names sessions, never panes or windows: a window and its panes
// are inside when every session holding the window is (see the server's
// enforcement). The owner mark of own is a session user option, so it
// lives with the session in tmux, survives a restart of tmux-mcp, and a
// person sees it in `tmux show-options`.
package scope

import (
	"errors"
	"fmt"
	"strings"
)

// OwnerOption is the session user option holding the identity that
// created a session through tmux-mcp ("stdio", a token's name,
// "oauth:SUBJECT").
const OwnerOption = "@tmux-mcp-owner"

// Scope is a parsed scope. The zero value is no scope: every session is
// inside and nothing is refused, today's behaviour.
type Scope struct {
	// Own admits sessions whose OwnerOption is the caller's identity.
	Own bool
	// Names, IDs and Prefixes admit sessions by exact name, by id ($N)
	// and by name prefix (PREFIX*).
	Names    []string
	IDs      []string
	Prefixes []string
	set      bool
}

// Nothing is a scope that admits no session: what a caller gets when its
// configured scope cannot be read (fail closed).
var Nothing = Scope{set: true}

// ErrSyntax is wrapped by every Parse error. The message says what the
// syntax is, never the value: a tokens file is a secret file.
var ErrSyntax = errors.New("a scope is own, sessions=NAME,$ID,PREFIX* or own,sessions=LIST")

// Parse reads a scope: "" or "none" (no scope), "own",
// "sessions=LIST" or "own,sessions=LIST", where LIST is comma-separated
// exact session names, session ids ($3) and name prefixes (build-*). The
// list is everything after "sessions=", so a session named "own" can be
// listed; a name tmux could never give a session (with ':' or '.') or a
// '*' anywhere but at the end is an error, not a pattern that never
// matches.
func Parse(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return Scope{}, nil
	}
	sc := Scope{set: true}
	rest := s
	if rest == "own" {
		sc.Own = true
		return sc, nil
	}
	if r, ok := strings.CutPrefix(rest, "own,"); ok {
		sc.Own, rest = true, strings.TrimSpace(r)
	}
	list, ok := strings.CutPrefix(rest, "sessions=")
	if !ok {
		return Scope{}, ErrSyntax
	}
	items := strings.Split(list, ",")
	for i, it := range items {
		it = strings.TrimSpace(it)
		switch {
		case it == "":
			return Scope{}, fmt.Errorf("%w: entry %d of sessions= is empty", ErrSyntax, i+1)
		case strings.ContainsAny(it, ":."):
			return Scope{}, fmt.Errorf("%w: entry %d of sessions= holds ':' or '.', which no tmux session name has", ErrSyntax, i+1)
		case strings.HasSuffix(it, "*"):
			p := strings.TrimSuffix(it, "*")
			if strings.Contains(p, "*") {
				return Scope{}, fmt.Errorf("%w: entry %d of sessions= has a '*' that is not at its end", ErrSyntax, i+1)
			}
			sc.Prefixes = append(sc.Prefixes, p)
		case strings.Contains(it, "*"):
			return Scope{}, fmt.Errorf("%w: entry %d of sessions= has a '*' that is not at its end", ErrSyntax, i+1)
		case isSessionID(it):
			sc.IDs = append(sc.IDs, it)
		default:
			sc.Names = append(sc.Names, it)
		}
	}
	return sc, nil
}

func isSessionID(s string) bool {
	if len(s) < 2 || s[0] != '$' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// None reports the zero scope: no confinement.
func (sc Scope) None() bool { return !sc.set }

// Listed reports whether the scope admits a session by its id or name
// alone, whoever made it.
func (sc Scope) Listed(id, name string) bool {
	for _, x := range sc.IDs {
		if x == id {
			return true
		}
	}
	for _, x := range sc.Names {
		if x == name {
			return true
		}
	}
	for _, p := range sc.Prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ListedName reports whether a session of this name would be admitted by
// name alone (create_session and rename_session ask before the session
// has an id).
func (sc Scope) ListedName(name string) bool { return sc.Listed("", name) }

// Admits reports whether a session is inside for the caller identity:
// listed, or marked (owner, its OwnerOption, "" when unset) as made by
// identity when the scope has own. No scope admits everything.
func (sc Scope) Admits(id, name, owner, identity string) bool {
	if sc.None() {
		return true
	}
	if sc.Own && owner != "" && owner == identity {
		return true
	}
	return sc.Listed(id, name)
}

// String is the scope in Parse's syntax ("none" for no scope).
func (sc Scope) String() string {
	if sc.None() {
		return "none"
	}
	var list []string
	list = append(list, sc.Names...)
	list = append(list, sc.IDs...)
	for _, p := range sc.Prefixes {
		list = append(list, p+"*")
	}
	switch {
	case !sc.Own && len(list) == 0:
		return "nothing"
	case sc.Own && len(list) == 0:
		return "own"
	case sc.Own:
		return "own,sessions=" + strings.Join(list, ",")
	}
	return "sessions=" + strings.Join(list, ",")
}
