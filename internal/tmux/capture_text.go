package tmux

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Bulk captures over a second control client that carries nothing else.
//
// The buffer form (capture_file.go) keeps pane text off the shared
// connection, but every save-buffer costs tmux a turn of its event loop
// (it answers a file write on a later turn), which with hundreds of panes
// is hundreds of turns, each polling every pane's descriptor: 500 captures
// took 1.9 s that way against 0.2 s as four exec'd processes. "capture-pane
// -p" needs no turn of its own, so a call with more captures than the
// buffer form takes goes, when the server is local, as it is over a control
// client of its own, the text connection, whose only traffic is such
// capture calls.
//
// Pane text then travels inside reply blocks, where a program in a pane can
// print lines that look like framing. It cannot change an answer unnoticed:
// every command of a call is followed by a block that must hold the call's
// random nonce (conn.go), so a forged %end or %begin either leaves a line
// outside any block or shifts a block into the place of a nonce, and the
// connection fails with ErrOutOfStep before anything is returned. That
// costs only the text connection (the shared one never sees pane text):
// the call is answered again by the path the runner would otherwise take
// (buffer form or exec; a capture only reads, so running it again is safe),
// and the socket gets no text connection for textPause, so a hostile pane
// can force at most one reconnect per pause.

// textPause is how long a socket's bulk captures stay off the text
// connection after it failed (forged framing, a lost client).
const textPause = time.Minute

// textConns are the runner's text connections, one per socket.
type textConns struct {
	mu    sync.Mutex
	socks map[Socket]*textSocket
}

type textSocket struct {
	sem  chan struct{} // held while connecting
	conn *engineConn   // guarded by sem
	live atomic.Pointer[engineConn]

	mu    sync.Mutex
	until time.Time // no text connection before this
}

func (t *textConns) socket(sock Socket) *textSocket {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.socks == nil {
		t.socks = make(map[Socket]*textSocket)
	}
	s := t.socks[sock]
	if s == nil {
		s = &textSocket{sem: make(chan struct{}, 1)}
		t.socks[sock] = s
	}
	return s
}

func (s *textSocket) paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.until)
}

func (s *textSocket) pause(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.until = time.Now().Add(d)
}

// all returns the sockets' connections (for Close and ClientPIDs).
func (t *textConns) all() []*textSocket {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*textSocket, 0, len(t.socks))
	for _, s := range t.socks {
		out = append(out, s)
	}
	return out
}

// textCall reports whether a call goes over the text connection: more
// captures than the buffer form takes, all "capture-pane -p" commands in
// the forms the buffer form accepts, besides only the read-only companions
// the buffer form allows, and no NUL byte. Smaller calls keep the buffer
// form, which never puts pane text on a control connection.
func textCall(cmds []Command) bool {
	captures := 0
	for _, c := range cmds {
		if _, ok := bufferCapture(c, ""); ok {
			captures++
		} else if len(c) == 0 || !captureCompanions[c[0]] || !overControl([]Command{c}) {
			return false
		}
		for _, a := range c {
			for i := 0; i < len(a); i++ {
				if a[i] == 0 {
					return false
				}
			}
		}
	}
	return captures > maxBufferCaptures
}

// runText runs a capture call over the socket's text connection. ok is
// false when it did not answer the call (no connection, or the connection
// failed under it): the caller then answers it by its other path.
func (r *ControlRunner) runText(ctx context.Context, sock Socket, cmds []Command) (outs [][]byte, ok bool, err error) {
	if r.Via != nil || !textCall(cmds) {
		return nil, false, nil
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	s := r.text.socket(sock)
	conn := r.textConn(ctx, sock, s)
	if conn == nil {
		return nil, false, nil
	}
	outs, err = conn.run(ctx, cmds, nil)
	var ce *CommandError
	switch {
	case err == nil:
		return outs, true, nil
	case errors.As(err, &ce):
		if !conn.sameSocket() {
			// Another server took the socket: let the other path ask it.
			conn.fail(fmt.Errorf("%w: the server behind the socket changed", ErrControlLost))
			return nil, false, nil
		}
		return outs, true, err
	case ctx.Err() != nil:
		return nil, true, ctxError(ctx, cmds, start)
	case errors.Is(err, errNotSent):
		return nil, false, nil
	}
	// Out of step (pane text forged framing) or the client went away.
	s.pause(textPause)
	return nil, false, nil
}

// textConn returns the socket's live text connection, connecting when
// there is none; nil when the call should take the other path. It is tied
// to the server the shared connection reached: a text connection to
// another server is dropped.
func (r *ControlRunner) textConn(ctx context.Context, sock Socket, s *textSocket) *engineConn {
	main, err := r.conn(ctx, sock)
	if err != nil || main == nil {
		return nil
	}
	if c := s.live.Load(); c != nil && !c.isDead() && c.id == main.id {
		return c
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	defer func() { <-s.sem }()
	if c := s.conn; c != nil {
		if !c.isDead() && c.id == main.id {
			return c
		}
		c.fail(fmt.Errorf("%w: the server behind the socket changed", ErrControlLost))
		s.conn = nil
		s.live.Store(nil)
	}
	if s.paused() {
		return nil
	}
	c, _, _ := r.connect(ctx, sock)
	if c == nil {
		s.pause(time.Second)
		return nil
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed || c.id != main.id {
		c.fail(fmt.Errorf("%w: not the shared connection's server", ErrControlLost))
		return nil
	}
	s.conn = c
	s.live.Store(c)
	return c
}

// closeText ends every text connection (Close).
func (r *ControlRunner) closeText() {
	for _, s := range r.text.all() {
		s.sem <- struct{}{}
		if s.conn != nil {
			s.conn.settle(time.Second)
			s.conn.close(fmt.Errorf("%w: runner closed", ErrControlLost))
			s.conn = nil
			s.live.Store(nil)
		}
		<-s.sem
	}
}

// textPIDs are the live text connections' client pids (ClientPIDs).
func (r *ControlRunner) textPIDs() []int {
	var pids []int
	for _, s := range r.text.all() {
		s.sem <- struct{}{}
		switch c := s.conn; {
		case c == nil || c.isDead():
		case c.clientPID != 0:
			pids = append(pids, c.clientPID)
		case c.pid() != 0:
			pids = append(pids, c.pid())
		}
		<-s.sem
	}
	return pids
}
