package tmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Capturing pane text over the control connection without the text ever
// travelling on it. A pane's screen is chosen by whatever program runs in
// it, so "capture-pane -p" over the shared connection would let a pane print
// lines that look like the protocol's own %begin/%end/%output framing. The
// nonce checks in conn.go would notice such a forgery, but only by dropping
// the connection, which a hostile pane could then repeat on every call.
// Instead each "capture-pane -p ..." of a call is sent as
//
//	capture-pane -b <private name> ... ; save-buffer -b <name> <file> ; delete-buffer -b <name>
//
// in the same round trip as the rest of the call: tmux writes the text into
// a file in a private 0700 directory (the server writes files for control
// clients itself, before it answers), and the reply on the stream is empty.
// The file is read and removed here. A call costs one round trip on the
// connection and a file read instead of a tmux process (a few ms).
//
// The directory must be on the host of the tmux server, which writes the
// file: that is this host while the control client runs locally. On a
// remote host (ControlRunner.Via) captures go to the remote one-off path
// instead ("tmux source-file -" over a channel of the host's ssh master,
// exec_remote.go): the text travels on that call's own stream, framed by
// per-call nonce markers, never on the shared control connection.

// captureFiles is the runner's private directory for capture files, made on
// first use and removed at Close.
type captureFiles struct {
	mu     sync.Mutex
	dir    string
	err    error
	closed bool
	broken map[Socket]time.Time // captures there go to exec until then
}

// captureBackoff is how long a socket's captures go to exec after tmux
// could not write a capture file there.
const captureBackoff = time.Minute

// path returns the directory, creating it on first use. An error means
// captures go to exec.
func (f *captureFiles) path() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return "", errors.New("tmux: runner closed")
	}
	if f.dir == "" && f.err == nil {
		dir, err := os.MkdirTemp("", "tmux-mcp-capture-")
		switch {
		case err != nil:
			f.err = err
		case strings.ContainsAny(dir, "#\n") || !filepath.IsAbs(dir):
			// save-buffer expands formats in its path argument.
			os.Remove(dir)
			f.err = fmt.Errorf("tmux: capture directory %q is not usable in a tmux path", dir)
		default:
			f.err = os.Chmod(dir, 0o700) // MkdirTemp makes it 0700; be explicit
			f.dir = dir
		}
	}
	return f.dir, f.err
}

func (f *captureFiles) isBroken(sock Socket) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Now().Before(f.broken[sock])
}

func (f *captureFiles) setBroken(sock Socket) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken == nil {
		f.broken = make(map[Socket]time.Time)
	}
	f.broken[sock] = time.Now().Add(captureBackoff)
}

// remove deletes the directory and whatever a call abandoned in it (a file
// tmux wrote after its caller had given up).
func (f *captureFiles) remove() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
		f.dir = ""
	}
}

// maxBufferCaptures is the most captures one call sends in buffer form.
// Each save-buffer costs tmux a turn of its event loop (it writes the file
// and answers on a later turn), half a millisecond or more on a big server,
// so a call with more captures (search_panes over a big server) goes over
// the text connection instead (capture_text.go), or to exec where there is
// none: with 200 panes buffer form took 120-240 ms against 70-90 ms exec'd.
// Below this, buffer form wins (one capture: about 2 ms against 8 ms per
// call, in the same run) and keeps pane text off every control connection.
const maxBufferCaptures = 16

// captureCompanions are the commands that may share a call with captures in
// buffer form. They only read, so a call that has to go to exec after the
// capture ran (a save-buffer that failed) can safely run again.
var captureCompanions = map[string]bool{
	"display-message": true, "display": true, "list-panes": true, "lsp": true,
	"list-windows": true, "lsw": true, "list-sessions": true, "ls": true,
	"has-session": true, "has": true,
}

// captureFlags are the capture-pane flags a buffer capture keeps as they
// are; valueFlags take the next argument. -p is dropped; anything else
// (-b, -a, -P, -q, combined flags) sends the call to exec.
var (
	captureFlags = map[string]bool{"-e": true, "-J": true, "-N": true, "-C": true}
	valueFlags   = map[string]bool{"-t": true, "-S": true, "-E": true}
)

// bufferCapture returns the buffer form of a "capture-pane -p" command
// (without -p, with -b name), or false when the command is not one.
func bufferCapture(c Command, name string) (Command, bool) {
	if len(c) == 0 || (c[0] != "capture-pane" && c[0] != "capturep") {
		return nil, false
	}
	out := Command{"capture-pane", "-b", name}
	print := false
	for i := 1; i < len(c); i++ {
		a := c[i]
		switch {
		case a == "-p":
			print = true
		case captureFlags[a]:
			out = append(out, a)
		case valueFlags[a] && i+1 < len(c):
			out = append(out, a, c[i+1])
			i++
		default:
			return nil, false
		}
	}
	return out, print
}

// capturePlan is one call with its captures in buffer form.
type capturePlan struct {
	orig     []Command
	expanded []Command
	at       []int    // index in expanded of each original command
	files    []string // per original command: its capture file, "" when not a capture
}

// planCaptures returns the buffer form of a call made of "capture-pane -p"
// commands and read-only companions, or nil when the call is not one (or
// the directory cannot be had): it then goes to exec.
func (r *ControlRunner) planCaptures(sock Socket, cmds []Command) *capturePlan {
	// Count first: a call over the limit (a big search) goes elsewhere
	// and needs no buffer names.
	n := 0
	for _, c := range cmds {
		if _, ok := bufferCapture(c, ""); ok {
			n++
		}
	}
	if n == 0 || n > maxBufferCaptures {
		return nil
	}
	p := &capturePlan{orig: cmds, at: make([]int, len(cmds)), files: make([]string, len(cmds))}
	captures := 0
	for i, c := range cmds {
		if bc, ok := bufferCapture(c, ""); ok {
			name := newNonce(12) // only for captures: companions need none
			bc[2] = name         // capture-pane -b NAME
			captures++
			p.at[i] = len(p.expanded)
			p.files[i] = name // the directory is added below
			p.expanded = append(p.expanded, bc,
				Command{"save-buffer", "-b", name, ""},
				Command{"delete-buffer", "-b", name})
			continue
		}
		if len(c) == 0 || !captureCompanions[c[0]] || !overControl([]Command{c}) {
			return nil
		}
		p.at[i] = len(p.expanded)
		p.expanded = append(p.expanded, c)
	}
	if captures == 0 || captures > maxBufferCaptures || r.capture.isBroken(sock) {
		return nil
	}
	dir, err := r.capture.path()
	if err != nil {
		return nil
	}
	for i, name := range p.files {
		if name != "" {
			p.files[i] = filepath.Join(dir, name)
			p.expanded[p.at[i]+1][3] = p.files[i]
		}
	}
	for _, c := range p.expanded {
		for _, a := range c {
			if strings.IndexByte(a, 0) >= 0 {
				return nil
			}
		}
	}
	return p
}

// runCaptures runs a planned call over the connection and answers as
// ExecRunner would for the original commands.
func (r *ControlRunner) runCaptures(ctx context.Context, sock Socket, p *capturePlan) ([][]byte, error) {
	defer func() {
		for _, f := range p.files {
			if f != "" {
				_ = os.Remove(f)
			}
		}
	}()
	outs, viaExec, err := r.runConn(ctx, sock, p.expanded, p.orig)
	if viaExec {
		return outs, err
	}
	if errors.Is(err, ErrControlLost) && ctx.Err() == nil {
		// tmux 3.3a reports a file it could not write (a server of
		// another user, or on another host, a directory gone) as text
		// outside any reply block, which ends the connection. The call
		// only reads, so exec answers it, and the socket's captures go to
		// exec for a while: a broken directory costs one reconnect, not
		// one per call. The line ran to its end (delete-buffer too); the
		// buffers are deleted again in case it did not.
		r.capture.setBroken(sock)
		for _, f := range p.files {
			if f != "" {
				_, _ = r.execRunner().Run(ctx, sock, Command{"delete-buffer", "-b", filepath.Base(f)})
			}
		}
		return r.execRunner().Run(ctx, sock, p.orig...)
	}
	var ce *CommandError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	failed := len(p.expanded) // index in expanded of the failing command
	if err != nil {
		failed = len(outs)
	}
	res := make([][]byte, 0, len(p.orig))
	total := 0
	for i, c := range p.orig {
		at := p.at[i]
		if p.files[i] == "" {
			if at == failed {
				return res, err
			}
			res = append(res, outs[at])
			continue
		}
		switch failed {
		case at: // the capture itself: a missing pane, a bad range
			ce.Command = c
			return res, err
		case at + 1: // save-buffer: the rest of the line did not run
			if strings.HasPrefix(ce.Stderr, "no buffer ") {
				// An empty capture makes no buffer: the text is empty.
				res = append(res, []byte{})
				if i+1 == len(p.orig) {
					return res, nil
				}
				rest, err := r.Run(ctx, sock, p.orig[i+1:]...)
				return append(res, rest...), err
			}
			// tmux could not write the file (another user's server, a
			// different host): forget the buffer, use exec from now on.
			r.capture.setBroken(sock)
			_, _, _ = r.runConn(ctx, sock, []Command{{"delete-buffer", "-b", filepath.Base(p.files[i])}}, nil)
			return r.execRunner().Run(ctx, sock, p.orig...)
		case at + 2: // delete-buffer after a good save: nothing to read is wrong
			return r.execRunner().Run(ctx, sock, p.orig...)
		}
		text, rerr := readCaptureFile(p.files[i], maxOutput-total)
		if rerr != nil {
			return nil, rerr
		}
		total += len(text)
		res = append(res, text)
	}
	return res, nil
}

// readCaptureFile reads a capture file of at most limit bytes.
func readCaptureFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tmux: reading the capture: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("tmux: reading the capture: %w", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("tmux: reply larger than %d bytes", maxOutput)
	}
	return b, nil
}
