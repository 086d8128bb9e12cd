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
		words = append(words, "start-server", "';'")
	}
	words = append(words, "source-file", "-")

	marker := "\x1e" + newNonce(8) + "-"
	line := make([][]string, 0, 2*len(cmds)+1)
	line = append(line, []string{"display-message", "-p", marker + "start"})
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

	argv, release, err := r.Via.Start(ctx, words)
	if err != nil {
		return nil, err // it says why (no free channel before ctx ended, no connection)
	}
	defer release()
	if r.OnSpawn != nil {
		r.OnSpawn(argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 500 * time.Millisecond
	if r.Env != nil {
		cmd.Env = r.Env
	}
	cmd.Stdin = strings.NewReader(text + "\n")
	stdout := &startWriter{mark: []byte(marker + "start\n"), started: make(chan struct{})}
	stdout.buf.limit = maxOutput
	var stderr limitedBuffer
	stderr.limit = 64 << 10
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
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
	at := bytes.Index(out, stdout.mark)
	outs := splitMarked(out[at+len(stdout.mark):], marker, len(cmds))
	if code == 0 {
		return outs, nil
	}
	failed := len(outs) - 1
	return outs[:failed], newCommandError(cmds[failed], msg, code)
}
