package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// ToolError is an error a tool reports to the agent as is: the message, a
// type name the agent (and the audit log) can branch on, whether it was an
// expected outcome of bad input rather than a fault, and a recovery hint.
type ToolError struct {
	Msg        string
	Type       string
	Expected   bool
	Suggestion string
	Err        error // cause, for errors.Is/As
}

func (e *ToolError) Error() string { return e.Msg }
func (e *ToolError) Unwrap() error { return e.Err }

// The error_type names the reference (libtmux-mcp) reports, for the
// failures ours reports the same way. The reference names the Python class
// of the exception a tool error was raised from (`raise ExpectedToolError(msg)
// from e` reports type(e).__name__), else the tool error's own class; a
// client written against it branches on these names, so ours uses them too.
const (
	// typeExpected: bad input found by the tool itself, with no cause.
	typeExpected = "ExpectedToolError"
	// typeObjectNotFound: libtmux's TmuxObjectDoesNotExist, which the
	// reference raises for a missing session or window (by name, id or
	// index); a missing pane is PaneNotFound.
	typeObjectNotFound = "TmuxObjectDoesNotExist"
	typePaneNotFound   = "PaneNotFound"
	// typeBadSessionName: libtmux refuses a session name that is empty or
	// holds '.' or ':' before tmux sees it.
	typeBadSessionName = "BadSessionName"
	// typeRegex: Python's re.error, raised for a pattern that does not
	// compile (search_panes, wait_for_text, a regex filter).
	typeRegex = "error"
	// typeJSON: json.JSONDecodeError, for a JSON-string argument (filters)
	// that is not JSON at all.
	typeJSON = "JSONDecodeError"
	// typeTimeout: asyncio's TimeoutError, for wait_for_channel's wait
	// running out.
	typeTimeout = "TimeoutError"
	// typeSecretPrompt: send_and_wait refused input not marked secret at a
	// password prompt. The input was probably a secret: the audit log
	// keeps no digest of it.
	typeSecretPrompt = "SecretPrompt"
	// typeOutOfScope: the call reaches beyond the caller's sessions
	// (scopeRefused); metrics count it as a refusal.
	typeOutOfScope = "OutOfScope"
)

// expectedf builds an expected error: the agent asked for something that
// cannot be done as asked. An error among args that the reference would
// have chained as the cause (a regular expression or JSON that does not
// parse) gives the error its type, as the reference's `from e` does.
func expectedf(format string, args ...any) *ToolError {
	te := &ToolError{Msg: fmt.Sprintf(format, args...), Type: typeExpected, Expected: true}
	for _, a := range args {
		if err, ok := a.(error); ok {
			if typ := causeType(err); typ != "" {
				te.Type, te.Err = typ, err
				break
			}
		}
	}
	return te
}

// causedBy gives te the type of its cause err where the reference names
// that cause (see causeType), and keeps err for errors.Is/As either way.
func causedBy(te *ToolError, err error) *ToolError {
	if err == nil {
		return te
	}
	if typ := causeType(err); typ != "" {
		te.Type = typ
	}
	te.Err = err
	return te
}

// causeType is the reference's error_type for an expected error chained to
// err: the Python exception class that plays err's part there, or "" when
// the reference raises that error without a cause.
func causeType(err error) string {
	var re *syntax.Error
	var je *json.SyntaxError
	switch {
	case errors.As(err, &re):
		return typeRegex
	case errors.As(err, &je):
		return typeJSON
	}
	return ""
}

// regexErr is a regular expression's compile error with the expression it
// quotes clipped (errarg): that expression is the caller's argument, or a
// piece of it. It stays a *syntax.Error, which types the tool error.
func regexErr(err error) error {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err
	}
	c := *se
	c.Expr = errarg.Bare(se.Expr)
	return &c
}

// optionErrorType is libtmux's handle_option_error: the class it raises for
// tmux's answer to an option or hook command, chosen by what the message
// says, OptionError when it says none of these.
func optionErrorType(stderr string) string {
	switch {
	case strings.Contains(stderr, "unknown option"):
		return "UnknownOption"
	case strings.Contains(stderr, "invalid option"):
		return "InvalidOption"
	case strings.Contains(stderr, "ambiguous option"):
		return "AmbiguousOption"
	}
	return "OptionError"
}

// hint is the discovery tool that lists valid targets of each kind.
var hint = map[string]string{
	"session": "Call list_sessions to discover valid session names and ids.",
	"window":  "Call list_windows to discover valid window ids.",
	"pane":    "Call list_panes to discover valid pane ids.",
	"buffer":  "Buffers are only those returned by load_buffer in this server process.",
	"":        "Call list_sessions / list_windows / list_panes to discover valid ids.",
}

// toToolError maps any error a tool returns to what the agent sees.
func toToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	var nf *tmux.NotFoundError
	var bad *tmux.BadIDError
	switch {
	case errors.As(err, &bad):
		// The reference checks no id's form: it looks the id up, finds
		// nothing and says so; ours says why nothing can match.
		typ := typeObjectNotFound
		if bad.Kind == "pane" {
			typ = typePaneNotFound
		}
		return &ToolError{Msg: err.Error(), Type: typ, Expected: true, Suggestion: hint[bad.Kind], Err: err}
	case errors.As(err, &nf):
		typ := typeObjectNotFound
		switch nf.What {
		case "pane":
			typ = typePaneNotFound
		case "buffer":
			typ = "ObjectDoesNotExist" // see Differences "buffer-not-found"
		}
		return &ToolError{Msg: capitalize(nf.Error()), Type: typ, Expected: true, Suggestion: hint[nf.What], Err: err}
	case errors.Is(err, tmux.ErrBadID):
		return &ToolError{Msg: err.Error(), Type: typeExpected, Expected: true, Suggestion: hint[""], Err: err}
	case errors.Is(err, tmux.ErrControlLost):
		return &ToolError{Msg: "tmux error: " + err.Error(), Type: "TmuxConnectionLost", Expected: true,
			Suggestion: "The connection to tmux dropped (the session it used may have been killed). A read can simply be repeated; check the state before repeating an action.", Err: err}
	case errors.Is(err, tmux.ErrTooLong):
		return &ToolError{Msg: err.Error(), Type: typeExpected, Expected: true,
			Suggestion: "Send long text with load_buffer and paste_buffer, or in several calls.", Err: err}
	case errors.Is(err, tmux.ErrHostUnreachable), errors.Is(err, remote.ErrBusy):
		return &ToolError{Msg: err.Error(), Type: "HostUnreachable", Expected: true,
			Suggestion: "The call did not reach the remote host (ssh). The next call reconnects; `tmux-mcp doctor` checks each configured host.", Err: err}
	case errors.Is(err, tmux.ErrUnsafeSocket):
		// A remote host's check (the local one runs before any call).
		return &ToolError{Msg: "socket_path: " + err.Error(), Type: "ValidationError", Expected: true, Err: err}
	case errors.Is(err, tmux.ErrBadRemoteWord):
		return &ToolError{Msg: err.Error(), Type: "ValidationError", Expected: true, Err: err}
	case errors.Is(err, tmux.ErrTmuxMissing) && strings.Contains(err.Error(), "on host "):
		return &ToolError{Msg: "tmux binary not found " + err.Error()[strings.Index(err.Error(), "on host "):] + ". Install tmux there, or name its binary in TMUX_MCP_HOSTS (?tmux=BIN).", Type: "TmuxCommandNotFound", Err: err}
	case errors.Is(err, tmux.ErrTmuxMissing):
		return &ToolError{Msg: "tmux binary not found. Ensure tmux is installed and in PATH, or set TMUX_MCP_TMUX_BIN.", Type: "TmuxCommandNotFound", Err: err}
	case errors.Is(err, tmux.ErrNoServer):
		return &ToolError{Msg: "tmux error: no tmux server is running on this socket", Type: "TmuxServerNotRunning", Expected: true,
			Suggestion: "Call list_servers to find running servers, or create_session to start one. " +
				"If TMUX_MCP_SOCKET names the server you meant, check that your client passed it to this server (the MCP Inspector needs -e).", Err: err}
	case errors.Is(err, tmux.ErrNotFound) && strings.Contains(err.Error(), "can't find pane"):
		return &ToolError{Msg: "Pane not found: " + err.Error(), Type: typePaneNotFound, Expected: true, Suggestion: hint["pane"], Err: err}
	case errors.Is(err, tmux.ErrNotFound):
		return &ToolError{Msg: "Object not found: " + err.Error(), Type: typeObjectNotFound, Expected: true, Suggestion: hint[""], Err: err}
	case errors.Is(err, tmux.ErrAmbiguous):
		return &ToolError{Msg: "Ambiguous target: " + err.Error(), Type: "MultipleObjectsReturned", Expected: true,
			Suggestion: "A window linked into several sessions is listed once per session; target panes and windows by id (%N, @N).", Err: err}
	case errors.Is(err, tmux.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return &ToolError{Msg: "tmux error: " + err.Error(), Type: "TmuxTimeout", Err: err}
	case errors.Is(err, context.Canceled):
		return &ToolError{Msg: "cancelled", Type: "Cancelled", Expected: true, Err: err}
	}
	var ce *tmux.CommandError
	if errors.As(err, &ce) {
		return &ToolError{Msg: "tmux error: " + ce.Error(), Type: "LibTmuxException", Expected: true, Err: err}
	}
	return &ToolError{Msg: fmt.Sprintf("Unexpected error: %v", err), Type: "InternalError", Err: err}
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// errorResult renders a ToolError as an isError result carrying the
// structured _meta of contract 4.5.
func errorResult(te *ToolError) *mcp.CallToolResult {
	text := te.Msg
	meta := mcp.Meta{"error_type": te.Type, "expected": te.Expected}
	if te.Suggestion != "" {
		text += "\n" + te.Suggestion
		meta["suggestion"] = te.Suggestion
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, Meta: meta}
}

// retryable reports whether a read-only call may be tried once more: only a
// tmux failure that could be transient, never a missing or ambiguous
// object, a missing binary, bad input or a dead server, and never a
// timeout: a tmux that did not answer within the bound will not answer a
// second try sooner, and retrying doubled the wait.
func retryable(err error) bool {
	var te *ToolError
	if errors.As(err, &te) && te.Err == nil {
		return false
	}
	for _, permanent := range []error{tmux.ErrTooLong, tmux.ErrNotFound, tmux.ErrAmbiguous, tmux.ErrTmuxMissing, tmux.ErrNoServer, tmux.ErrBadID, tmux.ErrTimeout, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	var ce *tmux.CommandError
	return errors.As(err, &ce) || errors.Is(err, tmux.ErrControlLost)
}
