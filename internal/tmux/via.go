package tmux

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/control"
)

// Via reaches a tmux server on another host through a transport program:
// the system ssh (package remote implements it). The runners and watchers
// then run the same tmux commands, with the same framing and nonce checks,
// only started through Via.
//
// What crosses the transport's command line is fixed and built only from
// validated words (the tmux binary, the socket, a session id): ssh joins
// its remote arguments into one string for the remote user's login shell,
// which may be bash, fish or csh, so anything else would be shell syntax on
// the far side. Everything a caller chooses (keys, buffer text, formats,
// names) travels on the process's standard input, quoted for tmux's own
// parser only: a control-mode client reads command lines there, and a
// one-off call runs "tmux source-file -", which reads them there.
type Via interface {
	// Host names the host in messages.
	Host() string
	// Start returns the argv that runs words as the remote command, and a
	// release to call once that process has exited (it frees a session
	// slot of the connection, see remote.Host). An error means the host
	// cannot be reached; it wraps ErrHostUnreachable.
	Start(ctx context.Context, words []string) (argv []string, release func(), err error)
	// StartTimeout bounds how long the remote login shell may take to
	// start tmux (dotfiles may print, ask or hang).
	StartTimeout() time.Duration
}

// ErrHostUnreachable: the remote host of a call could not be reached, or
// its shell did not start tmux. The message names the host and why.
var ErrHostUnreachable = errors.New("remote host unreachable")

// safeWord is a word a remote login shell of any common family (sh, bash,
// zsh, fish, csh) takes literally: no quoting, globbing, expansion,
// separators or comments. A leading '-' is refused so that a value can
// never become an option. Compiled on first use: only remote hosts need it,
// and package init runs on every start-up.
var safeWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9._/+@][A-Za-z0-9._/+@,=:-]*$`)
})

// CheckRemoteWord reports whether s may appear as one word of a remote
// command line (a tmux binary or a socket name or path of a remote host).
func CheckRemoteWord(what, s string) error {
	if !safeWord().MatchString(s) || len(s) > 256 {
		return fmt.Errorf("%w: %s must be letters, digits and . _ / + @ , = : - (not first), at most 256", ErrBadRemoteWord, what)
	}
	return nil
}

// ErrBadRemoteWord: a value that would travel on a remote command line is
// not a plain word.
var ErrBadRemoteWord = errors.New("not usable on a remote command line")

// remoteWords is the fixed start of every remote tmux command line:
// "exec <bin> -u <socket flags>". exec (a builtin in every shell family)
// replaces the login shell, so nothing of it stays behind tmux.
func remoteWords(bin string, sock Socket) ([]string, error) {
	if err := CheckRemoteWord("the remote tmux binary", bin); err != nil {
		return nil, err
	}
	words := []string{"exec", bin, "-u"}
	switch {
	case sock.Path != "":
		if err := CheckRemoteWord("a remote socket path", sock.Path); err != nil {
			return nil, err
		}
	case sock.Name != "":
		if err := CheckRemoteWord("a remote socket name", sock.Name); err != nil {
			return nil, err
		}
	}
	return append(words, sock.Args()...), nil
}

// remoteSessionWord is a session id ("$3") as a remote shell word: single
// quotes keep the "$" literal in every shell family, and the id is checked
// to be "$" and digits, so nothing else can be inside them.
func remoteSessionWord(id string) (string, error) {
	if _, err := ParseSessionID(id); err != nil {
		return "", err
	}
	return "'" + id + "'", nil
}

// hostError is a call's error for a remote host: ErrHostUnreachable with
// the host and the reason (the transport's last message).
func hostError(host, reason string) error {
	reason = lastLine(reason)
	if reason == "" {
		reason = "the connection ended"
	}
	return fmt.Errorf("%w: host %s: %s", ErrHostUnreachable, host, reason)
}

// startTimeoutError is the error of a remote shell that did not start tmux.
func startTimeoutError(host string, d time.Duration) error {
	return fmt.Errorf("%w: host %s: the remote shell did not start tmux within %s (a login dotfile waiting or hanging?)",
		ErrHostUnreachable, host, roundWait(d))
}

// lastLine is the last non-empty line of a message, trimmed: ssh and login
// shells put the reason last.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r", "")), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// onHost names the host in an error from a remote call, unless it already
// does (errors that wrap ErrHostUnreachable carry it). A lost connection
// also gets the transport's own reason when it has one (Diagnoser): the
// process that carried the call often only saw its pipe close.
func onHost(v Via, err error) error {
	var named *hostNamedError
	if err == nil || v == nil || errors.Is(err, ErrHostUnreachable) || errors.As(err, &named) {
		return err // the runner's exec fallback may have named it already
	}
	e := &hostNamedError{host: v.Host(), err: err}
	if d, ok := v.(Diagnoser); ok && errors.Is(err, ErrControlLost) {
		e.why = d.Diagnose()
	}
	return e
}

// hostNamedError is a remote call's error with its host named once.
type hostNamedError struct {
	host, why string
	err       error
}

func (e *hostNamedError) Error() string {
	if e.why != "" {
		return "host " + e.host + ": " + e.err.Error() + " (ssh: " + e.why + ")"
	}
	return "host " + e.host + ": " + e.err.Error()
}

func (e *hostNamedError) Unwrap() error { return e.err }

// Diagnoser is a Via that can say why its transport last failed (the
// last message of an ssh connection that ended), for error messages.
type Diagnoser interface {
	Diagnose() string
}

// startRemoteControl starts a control client on v's host, attached to
// session (an id) with the given attach flags (our own constants). The
// remote command is "echo <nonce> ; exec tmux ... -C attach-session ...":
// echo is a builtin and ";" a separator in every shell family, and the
// random nonce (a plain word) tells the start of tmux's stream from
// anything the login shell's dotfiles printed before, however it looks
// (even a line like "%begin ..."). It returns the argv it ran.
func startRemoteControl(ctx context.Context, v Via, bin string, env []string, sock Socket, session, flags string, onEvent func(control.Event), tgt *ctlTarget) (*controlConn, []string, error) {
	words, err := remoteWords(bin, sock)
	if err != nil {
		return nil, nil, err
	}
	sw, err := remoteSessionWord(session)
	if err != nil {
		return nil, nil, err
	}
	words = append(words, "-N", "-C", "attach-session", "-f", flags, "-t", sw)
	startLine := newNonce(12)
	words = append([]string{"echo", startLine, ";"}, words...)
	argv, release, err := v.Start(ctx, words)
	if err != nil {
		return nil, nil, err
	}
	c, err := startControlOpts(argv, env, onEvent, startLine, release, tgt)
	if err != nil {
		return nil, nil, err
	}
	return c, argv, nil
}

// remoteStartError is the error of a remote control client that did not
// attach: the start-up bound passed (ErrTimeout from waitAttached), the
// shell could not run tmux, or the transport ended (its last message).
func (c *controlConn) remoteStartError(v Via, err error, wait time.Duration) error {
	if errors.Is(err, ErrTimeout) {
		return startTimeoutError(v.Host(), wait)
	}
	c.pmu.Lock()
	msg := c.stderr.String()
	c.pmu.Unlock()
	select {
	case <-c.exited:
		if code := c.proc.ProcessState.ExitCode(); code == 126 || code == 127 {
			return fmt.Errorf("%w: on host %s (%s)", ErrTmuxMissing, v.Host(), lastLine(msg))
		}
	default:
	}
	return hostError(v.Host(), msg)
}
