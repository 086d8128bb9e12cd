package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// TestErrorTypesLikeReference: each failure names the error_type the
// reference (libtmux-mcp 0.1.0a20) reports for the same call, read from its
// source and seen in the differential (e2e/reference_test.go): libtmux's
// TmuxObjectDoesNotExist for a missing session or window, handle_option_error's
// classes for option and hook commands, the Python class chained as the
// cause for a regex, JSON or timeout failure, BadSessionName for the names
// libtmux refuses.
func TestErrorTypesLikeReference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "dup", "-x", "80", "-y", "24")
	cases := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"session by name", "get_session_info", map[string]any{"session_name": "nope"}, "TmuxObjectDoesNotExist"},
		{"session by id", "list_windows", map[string]any{"session_id": "$99"}, "TmuxObjectDoesNotExist"},
		{"window by id", "get_window_info", map[string]any{"window_id": "@99"}, "TmuxObjectDoesNotExist"},
		{"window by index", "get_window_info", map[string]any{"session_name": "main", "window_index": "9"}, "TmuxObjectDoesNotExist"},
		{"window of list_panes", "list_panes", map[string]any{"window_id": "@99"}, "TmuxObjectDoesNotExist"},
		{"session of create_window", "create_window", map[string]any{"session_name": "nope"}, "TmuxObjectDoesNotExist"},
		{"window of kill_window", "kill_window", map[string]any{"window_id": "@99"}, "TmuxObjectDoesNotExist"},
		{"session of set_environment", "set_environment", map[string]any{"session_name": "nope", "name": "A", "value": "b"}, "TmuxObjectDoesNotExist"},
		{"target of set_option", "set_option", map[string]any{"option": "mouse", "value": "on", "scope": "session", "target": "nope"}, "TmuxObjectDoesNotExist"},
		{"pane", "get_pane_info", map[string]any{"pane_id": "%99"}, "PaneNotFound"},
		{"malformed pane id", "get_pane_info", map[string]any{"pane_id": "1"}, "PaneNotFound"},
		{"malformed session id", "list_windows", map[string]any{"session_id": "1"}, "TmuxObjectDoesNotExist"},
		{"malformed window id", "get_window_info", map[string]any{"window_id": "1"}, "TmuxObjectDoesNotExist"},
		{"window index not a number", "get_window_info", map[string]any{"session_name": "main", "window_index": "x"}, "TmuxObjectDoesNotExist"},
		{"window index not a number (pane tools)", "split_window", map[string]any{"session_name": "main", "window_index": "x"}, "TmuxObjectDoesNotExist"},
		{"unknown option", "show_option", map[string]any{"option": "no-such-option"}, "InvalidOption"},
		{"unknown option set", "set_option", map[string]any{"option": "no-such-option", "value": "1"}, "InvalidOption"},
		{"ambiguous option", "show_option", map[string]any{"option": "status-", "global_": true}, "AmbiguousOption"},
		{"bad option value", "set_option", map[string]any{"option": "mouse", "value": "lots", "scope": "session", "target": "main"}, "OptionError"},
		{"unknown hook", "show_hook", map[string]any{"hook_name": "no-such-hook"}, "InvalidOption"},
		{"filters not JSON", "list_sessions", map[string]any{"filters": "{bad"}, "JSONDecodeError"},
		{"filters JSON but not an object", "list_sessions", map[string]any{"filters": "[1]"}, "ExpectedToolError"},
		{"filters bad operator", "list_sessions", map[string]any{"filters": map[string]any{"session_name__nope": "x"}}, "ExpectedToolError"},
		{"filters bad regex", "list_sessions", map[string]any{"filters": map[string]any{"session_name__regex": "["}}, "error"},
		{"search_panes bad regex", "search_panes", map[string]any{"pattern": "[", "regex": true}, "error"},
		{"wait_for_text bad regex", "wait_for_text", map[string]any{"pane_id": "%0", "patterns": []string{"["}, "regex": true, "timeout": 1}, "error"},
		{"channel wait times out", "wait_for_channel", map[string]any{"channel": "never", "timeout": 0.2}, "TimeoutError"},
		{"session name with a period", "create_session", map[string]any{"session_name": "a.b"}, "BadSessionName"},
		{"session name with a colon", "rename_session", map[string]any{"session_name": "dup", "new_name": "a:b"}, "BadSessionName"},
		{"duplicate session", "create_session", map[string]any{"session_name": "dup"}, "TmuxSessionExists"},
		{"bad scope use", "show_option", map[string]any{"option": "mouse", "target": "main"}, "ExpectedToolError"},
	}
	for _, c := range cases {
		msg, meta := e.fail(c.tool, c.args)
		if meta["error_type"] != c.want || meta["expected"] != true {
			t.Errorf("%s: %s(%v): error_type %v expected %v, want %s (%q)", c.name, c.tool, c.args, meta["error_type"], meta["expected"], c.want, msg)
		}
	}
	// "" is no filter at all, as in the reference.
	var rows []map[string]any
	e.list("list_sessions", map[string]any{"filters": ""}, &rows)
	if len(rows) != 2 {
		t.Errorf(`filters "": %d sessions, want 2`, len(rows))
	}
}

// unclosedClass is a pattern that does not compile (a variable, so vet
// tools do not flag the deliberate mistake).
var unclosedClass = "["

func TestErrorTypeRules(t *testing.T) {
	_, reErr := regexp.Compile(unclosedClass)
	var v any
	jsonErr := json.Unmarshal([]byte("{bad"), &v)
	typeErr := json.Unmarshal([]byte(`"s"`), &map[string]string{})
	for _, c := range []struct {
		name string
		te   *ToolError
		want string
	}{
		{"no cause", expectedf("plain %d", 1), "ExpectedToolError"},
		{"regex cause", expectedf("Invalid regex pattern: %v", reErr), "error"},
		{"wrapped regex cause", expectedf("x: %v", fmt.Errorf("y: %w", reErr)), "error"},
		{"JSON syntax cause", causedBy(expectedf("bad"), jsonErr), "JSONDecodeError"},
		{"JSON of the wrong shape", causedBy(expectedf("bad"), typeErr), "ExpectedToolError"},
		{"other error argument", expectedf("x: %v", errors.New("y")), "ExpectedToolError"},
		{"nil cause", causedBy(expectedf("x"), nil), "ExpectedToolError"},
	} {
		if c.te.Type != c.want || !c.te.Expected {
			t.Errorf("%s: type %s expected %v, want %s", c.name, c.te.Type, c.te.Expected, c.want)
		}
	}
	for stderr, want := range map[string]string{
		"invalid option: no-such-option": "InvalidOption",
		"unknown option: x":              "UnknownOption",
		"ambiguous option: status-":      "AmbiguousOption",
		"value is invalid: lots":         "OptionError",
		"too many arguments":             "OptionError",
	} {
		if got := optionErrorType(stderr); got != want {
			t.Errorf("optionErrorType(%q) = %s, want %s", stderr, got, want)
		}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&tmux.NotFoundError{What: "session", Detail: "x"}, "TmuxObjectDoesNotExist"},
		{&tmux.NotFoundError{What: "window", Detail: "@1"}, "TmuxObjectDoesNotExist"},
		{&tmux.NotFoundError{What: "pane", Detail: "%1"}, "PaneNotFound"},
		{&tmux.NotFoundError{What: "buffer", Detail: "b"}, "ObjectDoesNotExist"},
		{&tmux.CommandError{Stderr: "can't find session: x", Kind: tmux.ErrNotFound}, "TmuxObjectDoesNotExist"},
		{&tmux.CommandError{Stderr: "can't find pane: %9", Kind: tmux.ErrNotFound}, "PaneNotFound"},
	} {
		if got := toToolError(c.err).Type; got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}
