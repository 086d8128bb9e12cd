package tmux

import (
	"fmt"
	"strconv"
)

// SessionID, WindowID and PaneID are tmux's stable object ids ($1, @2, %3).
// They are distinct types so that a window id can never be passed where a
// pane is meant; they are only built by the Parse functions, which reject
// anything that is not exactly the sigil followed by decimal digits, so a
// malformed or hostile id never reaches tmux as a target.
type (
	SessionID string
	WindowID  string
	PaneID    string
)

// ErrBadID is wrapped by every id validation failure.
var ErrBadID = fmt.Errorf("malformed tmux id")

// BadIDError is an id, or a window index, that cannot name an object of
// its kind. It matches ErrBadID. Kind ("session", "window" or "pane") lets
// a caller report it as that kind of object not being found, which is what
// looking such an id up would give.
type BadIDError struct {
	Kind   string
	Detail string
}

func (e *BadIDError) Error() string { return ErrBadID.Error() + ": " + e.Detail }

// Is makes a BadIDError match ErrBadID.
func (e *BadIDError) Is(target error) bool { return target == ErrBadID }

// parseID is on the path of nearly every call, so the error (a Sprintf and
// an allocation) is built only when the id is bad.
func parseID(kind string, sigil byte, s string) (string, error) {
	ok := len(s) >= 2 && len(s) <= 12 && s[0] == sigil
	for i := 1; ok && i < len(s); i++ {
		ok = s[i] >= '0' && s[i] <= '9'
	}
	if !ok {
		return "", &BadIDError{Kind: kind, Detail: fmt.Sprintf("%s id must look like %c<number>", kind, sigil)}
	}
	return s, nil
}

// ParseSessionID validates a session id such as "$1".
func ParseSessionID(s string) (SessionID, error) {
	v, err := parseID("session", '$', s)
	return SessionID(v), err
}

// ParseWindowID validates a window id such as "@2".
func ParseWindowID(s string) (WindowID, error) {
	v, err := parseID("window", '@', s)
	return WindowID(v), err
}

// ParsePaneID validates a pane id such as "%3".
func ParsePaneID(s string) (PaneID, error) {
	v, err := parseID("pane", '%', s)
	return PaneID(v), err
}

// Num returns the numeric part of the id, used to sort panes the way tmux
// numbers them (so "%10" sorts after "%9").
func (p PaneID) Num() int {
	n, _ := strconv.Atoi(string(p)[1:])
	return n
}
