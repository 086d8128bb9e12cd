package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/control"
)

// A one-off call on a remote host. The remote command line is fixed:
//
//	exec <bin> -u <socket flags> [start-server ';'] source-file -
//
// and the commands travel on stdin as one tmux command line, quoted for
// tmux's parser (control.Join), as
//
//	display-message -p <nonce>start ; c0 ; display-message -p <nonce>0 ; c1 ...
//
// tmux runs the line as an exec'd chain would run: an error stops the rest
// of the line. The start marker tells tmux's output from what the remote
// login shell printed before it started tmux (dotfile banners): everything
// before it is dropped. Its absence bounds the start-up: a shell that has
// not started tmux within Via.StartTimeout is killed and the call fails
// saying so. The per-call nonce keeps pane text inside a capture from
// forging a marker, as in ExecRunner's local chains.

// remoteRefused is the exit status of remoteSocketCheck's refusal.
const remoteRefused = 97

// remoteSocketCheck is the remote command that refuses a socket path tmux
// would clobber when it starts a server there, as CheckSocketPath does
// locally: tmux unlinks whatever is at the path and at <path>.lock. So
// the path must be a socket (or a symlink to one) or nothing, and the lock
// file nothing or an empty regular file. p is a checked remote word (no
// quote, blank or shell syntax), so it can sit inside the single quotes
// that every shell family takes literally; the script has no "!" (csh
// history) and no newline (csh refuses one inside quotes).
func remoteSocketCheck(p string) []string {
	bad := func(what string) string {
		return `{ echo "` + what + `" >&2; exit 97; }`
	}
	script := `p=` + p + `; l=` + p + `.lock; ` +
		`if [ -S "$p" ]; then :; elif [ -d "$p" ]; then ` + bad("a directory exists there") +
		`; elif [ -e "$p" ] || [ -L "$p" ]; then ` + bad("a file that is not a socket exists there") + `; fi; ` +
		`if [ -L "$l" ]; then ` + bad(`a symlink exists at the path plus .lock, which tmux deletes when it starts a server there`) +
		`; elif [ -f "$l" ]; then if [ -s "$l" ]; then ` + bad(`a file exists at the path plus .lock, which tmux deletes when it starts a server there`) + `; fi; ` +
		`elif [ -e "$l" ]; then ` + bad(`something exists at the path plus .lock, which tmux deletes when it starts a server there`) + `; fi`
	return []string{"sh", "-c", "'" + script + "'"}
}

// checkRemoteSocketPath runs remoteSocketCheck on the host before a call
// that may start a server at path: a refusal is ErrUnsafeSocket, as the
// local check's.
func (r *ExecRunner) checkRemoteSocketPath(ctx context.Context, path string) error {
	refused, reason, err := r.runRemoteCheck(ctx, remoteSocketCheck(path), "", "check the socket path")
	switch {
	case err != nil:
		return err
	case refused:
		return refuse("%s on host %s; choose another path", reason, r.Via.Host())
	}
	return nil
}

// remoteDirCheck is the remote command that tells whether a path on the
// host is a directory (following symlinks, as a local os.Stat does): exit
// 0 for a directory, remoteRefused for anything else. The path is a
// caller's value, so it never crosses the command line (which the remote
// login shell parses, whichever family it is): the fixed script reads it
// from stdin. "$(cat)" drops trailing newlines, so the path arrives with
// a "/" appended, which keeps them and asks for a directory as chdir
// does. A value expanded inside double quotes is never parsed again, so
// nothing in the path runs. Like remoteSocketCheck, the script has no "!"
// and no newline, and its single quotes are literal in every shell.
var remoteDirCheck = []string{"sh", "-c", `'d=$(cat); [ -d "$d" ] || exit 97'`}

// ErrNotRemoteDir: a path on a remote host is not an existing directory
// (CheckRemoteDir).
var ErrNotRemoteDir = errors.New("not an existing directory")

// CheckRemoteDir reports whether path is an existing directory on the
// runner's host (Via), before a spawn that would start there: tmux
// silently starts a new pane in the home directory when it cannot change
// to the one given, so an agent would work in the wrong place. The answer
// is nil, an error wrapping ErrNotRemoteDir, or one wrapping
// ErrHostUnreachable when the host did not answer (never mistaken for a
// missing directory). It costs one process over the host's connection.
func (r *ExecRunner) CheckRemoteDir(ctx context.Context, path string) error {
	if r.Via == nil {
		return errors.New("tmux: CheckRemoteDir needs a remote host")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return fmt.Errorf("%w: %s on host %s (it contains a NUL byte)", ErrNotRemoteDir, errarg.Quoted(path), r.Via.Host())
	}
	refused, _, err := r.runRemoteCheck(ctx, remoteDirCheck, path+"/", "check the directory")
	switch {
	case err != nil:
		return err
	case refused:
		return fmt.Errorf("%w: %s on host %s", ErrNotRemoteDir, errarg.Bare(path), r.Via.Host())
	}
	return nil
}

// runRemoteCheck runs one of the fixed check scripts (remoteSocketCheck,
// remoteDirCheck) on the runner's host with stdin, and tells its refusal
// (exit status remoteRefused, with the last line of its stderr as the
// reason) from a host that could not answer, which is never taken for a
// refusal: ssh's own failure, a login shell that exited before the check
// ran, and one that did not run it within the start bound (the check does
// nothing else, so a longer wait is a dotfile waiting or hanging) are
// errors wrapping ErrHostUnreachable and naming the host. what names the
// check in those errors ("check the directory"). Each check costs one
// process over the host's connection.
func (r *ExecRunner) runRemoteCheck(ctx context.Context, script []string, stdin, what string) (refused bool, reason string, err error) {
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	argv, release, err := r.Via.Start(ctx, script)
	if err != nil {
		return false, "", err
	}
	defer release()
	bound := r.Via.StartTimeout()
	pctx, pcancel := context.WithTimeout(ctx, bound)
	defer pcancel()
	cmd := r.command(pctx, argv)
	cmd.Stdin = strings.NewReader(stdin)
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stderr = stderr // stdout (dotfile banners) is dropped
	runErr := cmd.Run()
	host := r.Via.Host()
	switch code := exitCode(runErr); {
	case code == 0:
		return false, "", nil
	case code == remoteRefused:
		return true, lastLine(stderr.String()), nil
	case ctx.Err() != nil:
		return false, "", ctxError(ctx, []Command{{what}}, start)
	case pctx.Err() != nil:
		return false, "", fmt.Errorf("%w: host %s: the remote shell did not %s within %s (a login dotfile waiting or hanging?)",
			ErrHostUnreachable, host, what, roundWait(bound))
	case code > 0 && code != 255 && lastLine(stderr.String()) == "":
		// Not ssh's failure (255): the login shell ended before the check.
		return false, "", hostError(host, fmt.Sprintf("the remote login shell exited with status %d before it could %s", code, what))
	default:
		return false, "", hostError(host, stderr.String())
	}
}

// writesStdoutFile reports whether a command writes to the client's stdout
// through tmux's file machinery rather than printing: show-buffer, and
// save-buffer to "-".
func writesStdoutFile(c Command) bool {
	switch c[0] {
	case "show-buffer", "showb":
		return true
	case "save-buffer", "saveb":
		return c[len(c)-1] == "-"
	}
	return false
}

// needsServer reports whether a chain would start a tmux server when run
// as an exec'd client ("source-file -" alone would not).
func needsServer(cmds []Command) bool {
	for _, c := range cmds {
		switch c[0] {
		case "new-session", "new", "start-server", "start":
			return true
		}
	}
	return false
}

// startWriter collects stdout and closes started once the start marker
// line has been seen.
type startWriter struct {
	mu      sync.Mutex
	buf     limitedBuffer
	mark    []byte
	seen    bool
	started chan struct{}
}

func (w *startWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), w.mark) {
		w.seen = true
		close(w.started)
	}
	return n, err
}

func (r *ExecRunner) runRemote(ctx context.Context, sock Socket, cmds []Command) ([][]byte, error) {
	for _, c := range cmds {
		if len(c) == 0 {
			return nil, errors.New("tmux: empty command")
		}
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()

	words, err := remoteWords(r.bin(), sock)
	if err != nil {
		return nil, err
	}
	if needsServer(cmds) {
		if sock.Path != "" {
			if err := r.checkRemoteSocketPath(ctx, sock.Path); err != nil {
				return nil, err
			}
		}
		words = append(words, "start-server", "';'")
	}
	words = append(words, "source-file", "-")

	marker := "\x1e" + newNonce(8) + "-"
	line := make([][]string, 0, 2*len(cmds)+1)
	// A command that writes to the client's stdout as a file (show-buffer)
	// fails in tmux 3.3a ("-: Bad file descriptor") after anything else
	// printed: it runs alone, and the remote shell echoes the start line
	// before it execs tmux (as for a control client, startRemoteControl).
	var echoStart string
	if len(cmds) == 1 && writesStdoutFile(cmds[0]) {
		echoStart = newNonce(12)
		words = append([]string{"echo", echoStart, ";"}, words...)
	} else {
		line = append(line, []string{"display-message", "-p", marker + "start"})
	}
	for i, c := range cmds {
		if i > 0 {
			line = append(line, []string{"display-message", "-p", fmt.Sprintf("%s%d", marker, i-1)})
		}
		line = append(line, c)
	}
	text, err := control.Join(line...)
	if err != nil {
		return nil, fmt.Errorf("tmux: %w", err)
	}

	// A wait runs with a terminal when the transport offers one, so that
	// it ends with its caller (see TTYVia); its line is short.
	tv, tty := r.Via.(TTYVia)
	tty = tty && blocks(cmds) && len(text) < maxTTYLine
	startFn := r.Via.Start
	if tty {
		startFn = tv.StartTTY
	}
	argv, release, err := startFn(ctx, words)
	if err != nil {
		return nil, err // it says why (no free channel before ctx ended, no connection)
	}
	defer release()
	if r.OnSpawn != nil {
		r.OnSpawn(argv)
	}
	cmd := r.command(ctx, argv)
	cmd.Stdin = strings.NewReader(text + "\n")
	stdout := &startWriter{mark: []byte(marker + "start\n"), started: make(chan struct{})}
	if echoStart != "" {
		stdout.mark = []byte(echoStart + "\n")
	}
	if tty {
		// The terminal ends input at ^D on an empty line and writes "\r\n".
		cmd.Stdin = strings.NewReader(text + "\n\x04")
		stdout.mark = []byte(marker + "start\r\n")
	}
	stdout.buf.limit = maxOutput
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if err := startChild(cmd); err != nil {
		return nil, startError(argv[0], err)
	}
	// The login shell must start tmux within the bound; after that the
	// call's own deadline applies.
	var timedOut bool
	var tmu sync.Mutex
	waitStart := r.Via.StartTimeout()
	stopWatch := make(chan struct{})
	go func() {
		t := time.NewTimer(waitStart)
		defer t.Stop()
		select {
		case <-stdout.started:
		case <-stopWatch:
		case <-t.C:
			tmu.Lock()
			timedOut = true
			tmu.Unlock()
			_ = cmd.Process.Kill()
		}
	}()
	if tty {
		// A terminal command holds only a handshake slot (TTYVia): free
		// it once the remote command has started.
		go func() {
			select {
			case <-stdout.started:
				release()
			case <-stopWatch:
			}
		}()
	}
	runErr := cmd.Wait()
	close(stopWatch)

	stdout.mu.Lock()
	out := stdout.buf.Bytes()
	started, overflow := stdout.seen, stdout.buf.overflow
	stdout.mu.Unlock()
	tmu.Lock()
	killed := timedOut
	tmu.Unlock()

	host := r.Via.Host()
	msg := strings.TrimPrefix(lastLine(stderr.String()), "-:1: ")
	if tty && exitCode(runErr) != 255 {
		// tmux's errors came through the terminal, after its start line
		// (or after the echo of our input when it never started).
		tail := out
		if at := bytes.Index(out, stdout.mark); at >= 0 {
			tail = out[at+len(stdout.mark):]
		}
		// The terminal echoes our input line whenever the line discipline
		// gets to it, before or after tmux's error: that line is never the
		// error.
		var lines []string
		for _, l := range strings.Split(strings.ReplaceAll(string(tail), "\r", ""), "\n") {
			if l = strings.TrimSpace(strings.TrimLeft(l, "\x04")); l != "" && l != text {
				lines = append(lines, l)
			}
		}
		msg = ""
		if len(lines) > 0 {
			msg = strings.TrimPrefix(lines[len(lines)-1], "-:1: ")
		}
	}
	switch {
	case killed && !started:
		return nil, startTimeoutError(host, waitStart)
	case ctx.Err() != nil:
		return nil, ctxError(ctx, cmds, start)
	case overflow:
		return nil, fmt.Errorf("tmux: reply larger than %d bytes", maxOutput)
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return nil, startError(argv[0], runErr)
	}
	code := 0
	if exitErr != nil {
		code = exitErr.ExitCode()
	}
	if !started {
		switch code {
		case 1: // tmux ran and refused the whole line: no server, a parse error
			return nil, newCommandError(cmds[0], msg, 1)
		case 126, 127: // the shell could not run the tmux binary
			return nil, fmt.Errorf("%w: %s on host %s (%s)", ErrTmuxMissing, r.bin(), host, msg)
		}
		return nil, hostError(host, stderr.String())
	}
	if code == 255 || code == -1 { // ssh failed, or was killed by a signal
		why := msg
		if why == "" {
			why = "ssh " + runErr.Error()
		}
		return nil, fmt.Errorf("%w: host %s: the connection ended during the call, which may or may not have run (%s)",
			ErrHostUnreachable, host, why)
	}
	if tty {
		// A wait prints nothing: what is there is tmux's error.
		if code == 0 {
			return [][]byte{{}}, nil
		}
		return nil, newCommandError(cmds[0], msg, code)
	}
	at := bytes.Index(out, stdout.mark)
	if echoStart != "" {
		// The shell's echo is all that tells tmux's output from the
		// dotfiles': whether tmux ran says its exit status.
		if code == 0 {
			return [][]byte{out[at+len(stdout.mark):]}, nil
		}
		return nil, newCommandError(cmds[0], msg, code)
	}
	outs := splitMarked(out[at+len(stdout.mark):], marker, len(cmds))
	if code == 0 {
		return outs, nil
	}
	failed := len(outs) - 1
	return outs[:failed], newCommandError(cmds[failed], msg, code)
}

// TTYVia is a Via that can also run a command with a terminal (ssh -tt).
// A remote tmux client blocked in wait-for has read all its input, and
// sshd does not signal a command without a terminal when its channel
// closes: such a wait would outlive a caller that gave up, until someone
// signalled the channel. With a terminal, the end of the connection hangs
// it up and the client exits. Only waits use it: a terminal turns "\n"
// into "\r\n", merges stderr into stdout, and limits an input line to
// 4 KiB. StartTTY's release may be called twice: once the remote command
// has started (it bounds handshakes, not waits) and when it ends.
type TTYVia interface {
	Via
	StartTTY(ctx context.Context, words []string) (argv []string, release func(), err error)
}

// maxTTYLine keeps a wait's input line inside the terminal's line buffer
// (4095 bytes in Linux's canonical mode); longer ones go without one.
const maxTTYLine = 3000

// blocks reports whether a call is one wait-for that waits: on a channel
// or for a lock (-S signals and -U unlocks, which return at once).
func blocks(cmds []Command) bool {
	if len(cmds) != 1 || len(cmds[0]) < 2 || (cmds[0][0] != "wait-for" && cmds[0][0] != "wait") {
		return false
	}
	args := cmds[0][1:]
	return len(args) == 1 || len(args) == 2 && args[0] == "-L"
}

// exitCode is the exit status of a finished process (0 without an error,
// -1 for a signal or an error that is not an exit status).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
