package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/control"
)

// A Watcher is a control-mode client attached to one existing session so
// that tmux streams the output of that session's panes to us as %output
// events. tmux only sends output for panes in windows of the session a
// control client is attached to, hence one watcher per watched session.
//
// It attaches with ignore-size (our client never resizes the user's windows)
// and pause-after (a flood pauses the pane's stream instead of stalling the
// program in the pane or getting our client disconnected); it never creates
// a session, so it neither starts a server nor keeps one alive.
type Watcher struct {
	sock    Socket
	session string

	c *controlConn
	// clientPID is the remote control client's pid (#{client_pid} there);
	// 0 for a local watcher, whose client is c's own process.
	clientPID int
	closing   atomic.Bool // Close was called: an end that is not a loss

	mu      sync.Mutex
	subs    map[string]map[*Subscription]struct{} // pane id -> subscriptions
	done    chan struct{}
	ready   chan struct{} // closed once tmux has attached us (%session-changed)
	err     error
	idle    *time.Timer
	idleGen int       // counts idle timers armed and stopped; a stale one does nothing
	leased  time.Time // when Get last handed the watcher out
	idleFor time.Duration
	onClose func()
}

// pauseAfter is how far (seconds) a pane's stream may fall behind before
// tmux pauses it; we then resume it and report that output was missed.
const pauseAfter = 3

// watchIdle is how long a watcher with no subscription stays attached, so
// back-to-back waits reuse it.
var watchIdle = 5 * time.Second

// watchAttachTimeout bounds how long attaching a watcher may take.
const watchAttachTimeout = 5 * time.Second

// startWatcher attaches a watcher to session (an id like "$1"), on the
// host via reaches when via is set.
func startWatcher(bin string, env []string, sock Socket, session string, via Via) (*Watcher, error) {
	if _, err := ParseSessionID(session); err != nil {
		return nil, err
	}
	flags := fmt.Sprintf("ignore-size,pause-after=%d", pauseAfter)
	attach := Command{"attach-session", "-t", session, "-f", flags}
	argv := append([]string{bin, "-u"}, sock.Args()...)
	// -N: never start a server; attach-session never creates a session.
	argv = append(append(argv, "-N", "-C"), attach...)
	w := &Watcher{sock: sock, session: session,
		subs: map[string]map[*Subscription]struct{}{}, done: make(chan struct{}), ready: make(chan struct{}), idleFor: watchIdle}
	attachTimeout := watchAttachTimeout
	if via != nil {
		attachTimeout += via.StartTimeout()
	}
	tgt := targetOf(bin, env, sock, via)
	gctx, gcancel := context.WithTimeout(context.Background(), gateWait)
	started, err := tgt.gate.enterStart(gctx)
	gcancel()
	if err != nil {
		return nil, fmt.Errorf("%w: waiting %s to attach a control client to session %s", ErrTimeout, gateWait, session)
	}
	// One bound for the attach and the session-changed that follows it.
	attachBy := time.Now().Add(attachTimeout)
	gctx, gcancel = context.WithDeadline(context.Background(), attachBy)
	defer gcancel()
	var c *controlConn
	if via != nil {
		c, _, err = startRemoteControl(gctx, via, bin, env, sock, session, flags, w.handle, tgt)
	} else {
		c, err = startControl(argv, env, w.handle, tgt)
	}
	if err != nil {
		started()
		return nil, err
	}
	w.c = c
	go func() {
		<-c.dead
		w.finish(w.connErr())
	}()
	// Commands sent before the attach completes run before it, and output
	// printed then is not streamed to us: wait until tmux says we are in
	// (%session-changed follows the attach command's reply).
	err = c.waitAttached(context.Background(), time.Until(attachBy), attach)
	// tmux runs the attach only once the client is identified.
	c.endStart(started, err)
	if err != nil {
		if errors.Is(err, ErrTimeout) {
			// Detached once the start ended (endStart): not waited for.
			c.fail(fmt.Errorf("%w: attach failed: %v", ErrControlLost, err))
		} else {
			c.close(fmt.Errorf("%w: attach failed: %v", ErrControlLost, err))
		}
		var ce *CommandError
		if via != nil && !errors.As(err, &ce) {
			<-w.done
			return nil, c.remoteStartError(via, err, attachTimeout)
		}
		if errors.Is(err, ErrTimeout) {
			return nil, fmt.Errorf("%w: attaching a control client to session %s", ErrTimeout, session)
		}
		<-w.done
		return nil, fmt.Errorf("attaching to session %s: %w", session, w.Err())
	}
	select {
	case <-w.ready:
		if via != nil {
			// Results leave our own clients out by pid: on a remote host
			// that is the remote client's, not our ssh's.
			ctx, cancel := context.WithDeadline(context.Background(), attachBy)
			outs, err := w.Command(ctx, Command{"display-message", "-p", "#{client_pid}"})
			cancel()
			if err != nil {
				w.Close()
				return nil, fmt.Errorf("attaching to session %s: %w", session, err)
			}
			w.clientPID, _ = strconv.Atoi(strings.TrimSpace(string(outs[0])))
			if keep, pid := straysOf(via), w.clientPID; keep != nil && pid != 0 {
				go func() {
					<-w.done
					if !w.closing.Load() {
						keep.Add(sock, pid) // lost, not closed: see StrayClients
					}
				}()
			}
		}
		return w, nil
	case <-w.done:
		return nil, fmt.Errorf("attaching to session %s: %w", session, w.Err())
	case <-time.After(time.Until(attachBy)):
		w.Close()
		return nil, fmt.Errorf("%w: attaching a control client to session %s", ErrTimeout, session)
	}
}

// connErr is the watcher's error for its ended connection: tmux's refusal
// of the attach (so "can't find session" is not reported as "no server"),
// a forged reply, or the client's end.
func (w *Watcher) connErr() error {
	if msg := w.c.attachRefusal(); msg != "" {
		return newCommandError(Command{"attach-session", "-t", w.session}, msg, 1)
	}
	if err := w.c.err(); errors.Is(err, ErrOutOfStep) {
		return err
	}
	if w.closing.Load() {
		// Our own Close (idle, shutdown): the server may well run.
		return fmt.Errorf("%w: the watcher of session %s was closed", ErrControlLost, w.session)
	}
	return fmt.Errorf("%w: the tmux control client for session %s ended", ErrNoServer, w.session)
}

// Done is closed when the watcher's connection ends.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err is why the connection ended.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) handle(ev control.Event) {
	switch e := ev.(type) {
	case *control.Output:
		w.deliver(e.Pane, e.Data)
	case *control.ExtendedOutput:
		w.deliver(e.Pane, e.Data)
	case *control.Pause:
		w.mu.Lock()
		for s := range w.subs[e.Pane] {
			s.markLost()
		}
		w.mu.Unlock()
		// The connection resumes the stream; the subscribers know they
		// missed something.
	case *control.SessionChanged:
		select {
		case <-w.ready:
		default:
			close(w.ready)
		}
	case *control.SessionsChanged, *control.WindowAdd, *control.UnlinkedWindowAdd, *control.WindowRenamed,
		*control.SessionRenamed, *control.UnlinkedWindowRenamed, *control.WindowPaneChanged:
		w.wakeStructure()
	case *control.LayoutChange:
		// A pane of the window appeared, died or was resized: wake its
		// subscribers so they can check on their pane.
		w.wake(e.Window)
		w.wakeStructure()
	case *control.WindowClose:
		w.windowGone(e.Window)
		w.wakeStructure()
	case *control.UnlinkedWindowClose:
		w.windowGone(e.Window)
		w.wakeStructure()
	case *control.SubscriptionChanged:
		if e.Name == structureSubscription {
			w.wakeStructure()
		} else if pane, ok := strings.CutPrefix(e.Name, paneStateSubscription); ok {
			w.paneChanged(pane)
		}
	}
}

func (w *Watcher) deliver(pane string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.subs[pane] {
		s.push(data)
	}
}

// StructurePane is the pseudo pane of subscriptions that want to hear about
// structure (sessions, windows, panes appearing, closing or renamed) rather
// than output.
const StructurePane = ""

// structureSubscription names the tmux format subscription (refresh-client
// -B) a watcher holds while it has structure subscribers. Control-mode
// events cover the watched session and the creation, renaming and closing
// of windows anywhere, but say nothing when a pane appears or closes in a
// window of another session. The format lists every session, window and
// pane with the names and indexes resource URIs use; tmux re-evaluates it
// about once a second, inside the server, and reports only a changed value,
// so that gap closes within a second without us polling.
const structureSubscription = "tmux-mcp-structure"

const structureFormat = "#{S:#{session_id} #{session_name}#{W: #{window_id} #{window_index}#{P: #{pane_id}}}|}"

func (w *Watcher) wakeStructure() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.subs[StructurePane] {
		s.signal()
	}
}

func (w *Watcher) wake(window string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.subs {
		for s := range set {
			if s.Window == window {
				s.changed()
			}
		}
	}
}

func (w *Watcher) windowGone(window string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.subs {
		for s := range set {
			if s.Window == window {
				s.markMoved()
			}
		}
	}
}

func (w *Watcher) finish(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	for _, set := range w.subs {
		for s := range set {
			s.markMoved()
		}
	}
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	onClose := w.onClose
	w.mu.Unlock()
	if onClose != nil {
		onClose()
	}
}

// send writes one command nobody waits for; its reply keeps its place in
// the stream and is dropped.
func (w *Watcher) send(cmd Command) error {
	_, err := w.c.send(context.Background(), []Command{cmd}, nil)
	return err
}

// Command runs commands on the watcher's own connection. Their replies are
// ordered with the output stream: output seen before a reply was printed
// before the command ran, output after it was printed after. That lets a
// wait subscribe and take its entry capture as one step.
func (w *Watcher) Command(ctx context.Context, cmds ...Command) ([][]byte, error) {
	return w.command(ctx, nil, cmds...)
}

// SubscribeAndRun subscribes to a pane and runs commands (typically the
// entry capture) as one step: the subscription starts with exactly the
// output the pane printed after the commands ran, nothing before.
func (w *Watcher) SubscribeAndRun(ctx context.Context, pane, window string, cmds ...Command) (*Subscription, [][]byte, error) {
	return w.subscribeAndRun(ctx, w.Subscribe(pane, window), cmds)
}

// subscribeAndRun runs cmds and empties s (a plain or timed subscription)
// once the last command's reply is read, so that s keeps only what
// followed them.
func (w *Watcher) subscribeAndRun(ctx context.Context, s *Subscription, cmds []Command) (*Subscription, [][]byte, error) {
	outs, err := w.command(ctx, func() {
		s.mu.Lock()
		s.buf, s.lost = nil, false
		s.chunks, s.chunkBytes = nil, 0
		s.mu.Unlock()
	}, cmds...)
	if err != nil {
		s.Close()
		return nil, outs, err
	}
	return s, outs, nil
}

// ErrOutOfStep: a control connection's replies no longer line up with its
// commands (pane text forged a reply block or a line outside one); the
// connection is closed.
var ErrOutOfStep = errors.New("tmux control replies out of step")

// command runs cmds as one call on the connection, framed with nonce
// markers (see ctlCall), so a reply block forged by pane text (a capture
// can hold any line) is detected instead of shifting replies. before runs
// on the reader goroutine when the last command's reply arrives, so the
// stream starts right after it.
func (w *Watcher) command(ctx context.Context, before func(), cmds ...Command) ([][]byte, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	outs, err := w.c.tgt.gate.notifying(ctx, cmds, func() ([][]byte, error) { return w.c.run(ctx, cmds, before) })
	switch {
	case err == nil:
		return outs, nil
	case errors.Is(err, ErrOutOfStep):
		return nil, err
	case errors.Is(err, errNotSent), errors.Is(err, ErrControlLost):
		<-w.done
		return outs, w.Err()
	}
	return outs, err
}

// Close detaches the watcher.
func (w *Watcher) Close() {
	w.closing.Store(true)
	w.c.close(fmt.Errorf("%w: watcher closed", ErrControlLost))
	<-w.done // the connection's end runs finish (startWatcher)
}

// Subscribe starts collecting a pane's output. window is the pane's window
// id, so the subscription learns when the window leaves the session.
func (w *Watcher) Subscribe(pane, window string) *Subscription {
	return w.subscribe(pane, window, false)
}

func (w *Watcher) subscribe(pane, window string, timed bool) *Subscription {
	s := &Subscription{Pane: pane, Window: window, w: w, notify: make(chan struct{}, 1), timed: timed}
	w.mu.Lock()
	if timed && !w.timedLocked(pane) {
		// Best effort, like the structure subscription: without it only
		// a pane that closes (not one kept dead) is noticed.
		_ = w.send(paneStateCommand(pane, window))
	}
	if w.subs[pane] == nil {
		w.subs[pane] = map[*Subscription]struct{}{}
		if pane == StructurePane {
			// Best effort: without it, changes in the watched session and
			// window-level changes elsewhere still arrive as events.
			_ = w.send(Command{"refresh-client", "-B", structureSubscription + "::" + structureFormat})
		}
	}
	w.subs[pane][s] = struct{}{}
	if w.idle != nil {
		w.idle.Stop()
		w.idle = nil
		w.idleGen++
	}
	w.mu.Unlock()
	return s
}

// lease is Get handing the watcher out: the idle close spares it for
// another idle time, so its caller can subscribe. It returns false when
// the watcher is closing and must not be handed out.
func (w *Watcher) lease() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing.Load() {
		return false
	}
	w.leased = time.Now()
	return true
}

// armIdleLocked closes the watcher after d unless it is subscribed to or
// handed out meanwhile; w.mu is held.
func (w *Watcher) armIdleLocked(d time.Duration) {
	w.idleGen++
	gen := w.idleGen
	w.idle = time.AfterFunc(d, func() {
		w.mu.Lock()
		if gen != w.idleGen || len(w.subs) > 0 || w.closing.Load() {
			w.mu.Unlock()
			return
		}
		if rest := w.idleFor - time.Since(w.leased); rest > 0 {
			w.armIdleLocked(rest)
			w.mu.Unlock()
			return
		}
		w.closing.Store(true)
		w.mu.Unlock()
		w.Close()
	})
}

func (w *Watcher) unsubscribe(s *Subscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.subs[s.Pane][s]; !ok {
		return // closed twice
	}
	delete(w.subs[s.Pane], s)
	if s.timed {
		w.dropPaneStateLocked(s.Pane)
	}
	if len(w.subs[s.Pane]) == 0 {
		delete(w.subs, s.Pane)
		if s.Pane == StructurePane {
			_ = w.send(Command{"refresh-client", "-B", structureSubscription})
		}
	}
	if len(w.subs) == 0 && w.idle == nil {
		w.armIdleLocked(w.idleFor)
	}
}

// maxSubscriptionBuffer bounds the output one subscription holds between
// reads; beyond it the oldest bytes are dropped and Lost reports it.
var maxSubscriptionBuffer = 64 << 20

// Subscription is one consumer's view of a pane's output stream. The
// watcher's reader never blocks on it: data is appended to a buffer and a
// one-slot channel signals that there is something new.
type Subscription struct {
	Pane   string
	Window string
	w      *Watcher

	mu     sync.Mutex
	buf    []byte
	lost   bool
	moved  bool
	notify chan struct{}

	// A timed subscription (SubscribeTimed) keeps each event apart, with
	// the time it arrived, in chunks instead of buf.
	timed      bool
	chunks     []Chunk
	chunkBytes int
}

func (s *Subscription) push(data []byte) {
	s.mu.Lock()
	if s.timed {
		s.pushChunkLocked(Chunk{At: time.Now(), Kind: ChunkOutput, Data: append([]byte(nil), data...)})
		s.mu.Unlock()
		s.signal()
		return
	}
	s.buf = append(s.buf, data...)
	if len(s.buf) > maxSubscriptionBuffer {
		s.buf = s.buf[len(s.buf)-maxSubscriptionBuffer:]
		s.lost = true
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Subscription) markLost() {
	s.mu.Lock()
	s.lost = true
	if s.timed {
		s.pushChunkLocked(Chunk{At: time.Now(), Kind: ChunkGap})
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) markMoved() {
	s.mu.Lock()
	s.moved = true
	s.mu.Unlock()
	s.signal()
}

// Notify signals that new output (or a change of state) is available.
func (s *Subscription) Notify() <-chan struct{} { return s.notify }

// Take returns and clears the output received since the last Take.
func (s *Subscription) Take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf
	s.buf = nil
	return b
}

// Lost reports (and clears) whether output was dropped since the last call:
// tmux paused the pane's stream, or the buffer overflowed.
func (s *Subscription) Lost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lost
	s.lost = false
	return l
}

// Moved reports whether the stream can no longer be trusted to carry the
// pane's output: its window left the watched session, or the connection
// ended. The consumer should subscribe again.
func (s *Subscription) Moved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.moved
}

// Watcher returns the watcher this subscription is on.
func (s *Subscription) Watcher() *Watcher { return s.w }

// Close ends the subscription.
func (s *Subscription) Close() { s.w.unsubscribe(s) }
