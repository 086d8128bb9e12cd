package tmux

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

// Sentinel errors that callers branch on with errors.Is. A *CommandError
// matches the sentinel its stderr was classified as.
var (
	// ErrTmuxMissing: the tmux binary could not be started.
	ErrTmuxMissing = errors.New("tmux binary not found")
	// ErrNoServer: no tmux server listens on the selected socket.
	ErrNoServer = errors.New("no tmux server running")
	// ErrNotFound: the session, window, pane or buffer does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: a target matched more than one object.
	ErrAmbiguous = errors.New("ambiguous target")
	// ErrTimeout: the call's deadline passed before tmux answered.
	ErrTimeout = errors.New("tmux call timed out")
)

// newCommandError builds the error of a command tmux ran and refused,
// classifying its message; every runner reports failures through it.
func newCommandError(cmd Command, stderr string, exitCode int) *CommandError {
	msg := strings.TrimSpace(stderr)
	return &CommandError{Command: cmd, Stderr: msg, ExitCode: exitCode, Kind: classify(msg)}
}

// startError says why the tmux binary could not be started: a missing or
// unusable binary is ErrTmuxMissing.
func startError(bin string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %s", ErrTmuxMissing, bin)
	}
	return fmt.Errorf("tmux: %w", err)
}

// CommandError is a tmux command that ran and failed. Kind is one of the
// sentinels above, or nil for an ordinary tmux error; errors.Is matches it.
type CommandError struct {
	Command  []string // the failing command's argv (without the tmux binary and socket flags)
	Stderr   string   // tmux's message, trimmed
	ExitCode int
	Kind     error
}

// Error is tmux's message with the command's name. tmux quotes arguments
// in its messages ("can't find session: NAME", "unknown value: VALUE"):
// a long one is shown clipped (errarg.Within), so an error never echoes a
// huge argument whole. Stderr keeps the message as tmux wrote it.
func (e *CommandError) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	if len(e.Command) > 0 {
		return e.Command[0] + ": " + errarg.Within(msg, e.Command[1:]...)
	}
	return errarg.Within(msg)
}

// Is lets errors.Is(err, ErrNotFound) and friends see the classification.
func (e *CommandError) Is(target error) bool { return e.Kind != nil && e.Kind == target }

// classify maps tmux's stderr to a sentinel. tmux has no error codes, so the
// wording of 3.2 to 3.5 is matched; an unknown message stays a plain error.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "no server running"),
		strings.Contains(s, "error connecting to"),
		strings.Contains(s, "server exited unexpectedly"),
		strings.Contains(s, "lost server"):
		return ErrNoServer
	case strings.Contains(s, "can't find"),
		strings.Contains(s, "no such session"),
		strings.Contains(s, "no such window"),
		strings.Contains(s, "no such pane"),
		strings.Contains(s, "session not found"),
		strings.Contains(s, "window not found"),
		strings.Contains(s, "pane not found"),
		strings.Contains(s, "no buffer"),
		strings.Contains(s, "unknown buffer"):
		return ErrNotFound
	case strings.Contains(s, "ambiguous"), strings.Contains(s, "more than one"):
		return ErrAmbiguous
	}
	return nil
}

// NotFoundError reports a target that tmux answered for but that matched
// nothing (for example a session name with no such session). What names
// the kind of object, so a caller can point at the right discovery tool.
type NotFoundError struct {
	What   string // "session", "window", "pane", "buffer"
	Detail string
}

// Error bounds Detail, which may be built from arguments (errarg.Within):
// callers clip each argument they put in it.
func (e *NotFoundError) Error() string { return e.What + " not found: " + errarg.Within(e.Detail) }

// Is makes a NotFoundError match ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
