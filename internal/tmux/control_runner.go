package tmux

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
)

// ErrControlLost: the control-mode connection ended (or was closed because
// its reply stream could no longer be trusted) while a call was in flight.
// The call is never re-sent: its commands may or may not have run.
var ErrControlLost = errors.New("tmux control connection lost")

// ServerIdentity tells one tmux server process from another that later
// listens on the same socket.
type ServerIdentity struct {
	PID       string // #{pid}
	StartTime string // #{start_time}
}

// ControlRunner is a Runner that sends commands over one persistent
// control-mode client per socket ("tmux -u -N [-L|-S] -C attach-session -f
// no-output,ignore-size -t <session>"), started on first use and shared by
// concurrent callers: each Run writes its commands as soon as it comes and
// replies are matched in order. A round trip costs tens of microseconds
// instead of a process start (about 2 ms).
//
// It never creates a session or starts a server: it attaches to a session
// that exists, picked with one exec'd list-sessions, and when the server
// runs no session (or does not run) the call goes to the exec runner. The
// connection is tied to the server it reached (#{pid}, #{start_time}, and
// the socket file): when the socket changes or the connection drops, the
// next Run reconnects. Calls in flight when it drops fail with
// ErrControlLost and are not re-sent. The connection itself (framing,
// nonce checks, shutdown, reaping, dying with this process) is the
// controlConn the watchers use too (conn.go).
//
// Commands whose result would differ between a client attached in control
// mode and a one-shot exec client (ones that block the client's queue such
// as wait-for or run-shell, spawn processes with the client's working
// directory, read or write the client's stdin/stdout, or act on the calling
// client) and any command not on the known list go to the exec runner, so a
// Run returns what ExecRunner would.
//
// While connected the control client is visible to tmux users: list-clients
// shows it (#{client_control_mode} is 1) and the session it is attached to
// counts as attached. Commands without -t resolve "the current session" to
// that session, where an exec client takes the most recently used one.
type ControlRunner struct {
	Bin string   // tmux binary; "tmux" when empty
	Env []string // when non-nil, the environment of every tmux process
	// Exec runs the calls that do not go over control mode; when nil, an
	// ExecRunner with the same Bin and Env.
	Exec *ExecRunner
	// OnConnect, when set, is called with the argv of every control
	// client started; tests count connections with it.
	OnConnect func(argv []string)
	// Timeout bounds a call whose context has no deadline; 0 means
	// DefaultTimeout. It also bounds the calls that go to Exec when Exec
	// is nil.
	Timeout time.Duration
	// AttachTimeout bounds how long a new control client may take to
	// attach (tmux answers in milliseconds); 0 means 3 s. A client that
	// does not attach in time is dropped and calls go to exec for a while,
	// so a hanging control client costs one call that much, not every
	// call its whole timeout.
	AttachTimeout time.Duration
	// Via, when set, reaches the tmux server on another host (see Via):
	// the control client and the exec'd calls run there, Bin is the
	// remote tmux binary, and captures go to the remote exec runner
	// (capture files would be written on the remote host).
	Via Via

	mu     sync.Mutex
	socks  map[Socket]*ctlSocket
	closed bool
	once   sync.Once
	exec   *ExecRunner

	capture captureFiles // capture_file.go
	text    textConns    // capture_text.go

	stat func(string) (os.FileInfo, error) // os.Stat; tests count calls
}

type ctlSocket struct {
	sem  chan struct{} // held while connecting
	conn *engineConn   // guarded by sem
	// live is conn for the calls' fast path, which takes neither sem nor
	// a stat of the socket: written under sem with conn.
	live      atomic.Pointer[engineConn]
	failUntil time.Time     // guarded by sem: skip connecting until then
	backoff   time.Duration // guarded by sem: the next wait after an attach timed out
	connected bool          // guarded by sem: a connection was made before (the next one is a reconnect)
}

// engineConn is the engine's connection: a control client plus the server
// it reached, to notice when another server takes the socket.
type engineConn struct {
	*controlConn
	sockPath string
	sockInfo os.FileInfo // nil for a remote server: its socket is not here
	id       ServerIdentity
	stat     func(string) (os.FileInfo, error)
	// clientPID is the control client's pid as its tmux server lists it
	// (#{client_pid}): on a remote host, not our ssh process's.
	clientPID int
}

// sameSocket checks that the socket file is still the one the connection
// was made through: a server started on the same path makes a new one. It
// is checked when connecting and when a call fails, not on every call: a
// server that exits ends the connection by itself (%exit or EOF), so only
// a new server started beside a live one (its socket file unlinked) goes
// unnoticed until a call fails there, as a call for that server's objects
// will.
func (c *engineConn) sameSocket() bool {
	if c.sockInfo == nil {
		// A remote server's restart ends the connection (%exit).
		return true
	}
	fi, err := c.stat(c.sockPath)
	return err == nil && os.SameFile(fi, c.sockInfo)
}

func (r *ControlRunner) bin() string { return binOrDefault(r.Bin) }

func (r *ControlRunner) execRunner() *ExecRunner {
	r.once.Do(func() {
		r.exec = r.Exec
		if r.exec == nil {
			r.exec = &ExecRunner{Bin: r.Bin, Env: r.Env, Timeout: r.Timeout, Via: r.Via}
		}
	})
	return r.exec
}

// Close ends every control connection. Calls in flight fail with
// ErrControlLost; later Runs use the exec runner.
func (r *ControlRunner) Close() error {
	r.mu.Lock()
	r.closed = true
	socks := r.socks
	r.socks = nil
	r.mu.Unlock()
	defer r.capture.remove()
	r.closeText()
	for sock, s := range socks {
		s.sem <- struct{}{}
		if s.conn != nil {
			if r.Via != nil && !s.conn.isDead() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_ = reapStrays(ctx, s.conn.controlConn, straysOf(r.Via), sock)
				cancel()
			}
			s.conn.settle(time.Second)
			s.conn.close(fmt.Errorf("%w: runner closed", ErrControlLost))
			s.conn = nil
			s.live.Store(nil)
		}
		<-s.sem
	}
	return nil
}

// Identity returns the identity of the server the socket's live control
// connection reached, if there is one.
func (r *ControlRunner) Identity(sock Socket) (ServerIdentity, bool) {
	r.mu.Lock()
	s := r.socks[sock]
	r.mu.Unlock()
	if s == nil {
		return ServerIdentity{}, false
	}
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	if s.conn == nil || s.conn.isDead() {
		return ServerIdentity{}, false
	}
	return s.conn.id, true
}

// controlSafe lists the commands (full names and tmux's aliases) that
// behave the same from a control client as from an exec client. Anything
// else, including unique prefixes tmux would accept, goes to exec.
var controlSafe = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`
		display-message display list-sessions ls list-windows lsw list-panes lsp
		list-buffers lsb list-clients lsc list-keys lsk list-commands lscm
		capture-pane capturep send-keys send send-prefix
		set-option set set-window-option setw show-options show show-window-options showw
		select-pane selectp select-window selectw select-layout selectl
		resize-pane resizep resize-window resizew rename-session rename rename-window renamew
		kill-pane killp kill-window killw kill-session has-session has
		set-buffer setb delete-buffer deleteb paste-buffer pasteb
		set-environment setenv show-environment showenv set-hook show-hooks
		swap-pane swapp swap-window swapw move-window movew move-pane movep
		link-window linkw unlink-window unlinkw join-pane joinp break-pane breakp
		pipe-pane pipep clear-history clearhist next-layout nextl previous-layout prevl
		next-window next previous-window prev last-window last last-pane lastp
		rotate-window rotatew bind-key bind unbind-key unbind start-server start`) {
		controlSafe[n] = true
	}
}

// overControl reports whether every command of a Run may go over control
// mode. Besides the safe list, a command whose reply could hold a line
// chosen by a program in a pane stays off the shared connection, so pane
// text can never forge its framing: capture-pane (the screen itself; Run
// sends it in buffer form instead, whose reply holds no text, see
// capture_file.go), and
// display-message with a format that is not one of our row formats (a
// user's format may begin with #{pane_title}, which a program sets by
// printing an escape sequence). Our row formats start every line with the
// row marker, so no value can begin a line.
func overControl(cmds []Command) bool {
	for _, c := range cmds {
		if len(c) == 0 || !controlSafe[c[0]] {
			return false
		}
		switch c[0] {
		case "capture-pane", "capturep":
			return false
		case "display-message", "display":
			if f := c[len(c)-1]; strings.Contains(f, "#") && !strings.HasPrefix(f, rowStart) {
				return false
			}
		}
		for _, a := range c {
			if strings.IndexByte(a, 0) >= 0 {
				return false
			}
		}
	}
	return true
}

// Run implements Runner. A call whose captures can go over the connection
// in buffer form (capture_file.go) does so; other calls that may not share
// the connection go to exec.
func (r *ControlRunner) Run(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	if r.Via != nil {
		outs, err := r.run(ctx, sock, cmds)
		return outs, onHost(r.Via, err)
	}
	return r.run(ctx, sock, cmds)
}

func (r *ControlRunner) run(ctx context.Context, sock Socket, cmds []Command) ([][]byte, error) {
	if !overControl(cmds) {
		if r.Via == nil {
			if p := r.planCaptures(sock, cmds); p != nil {
				return r.runCaptures(ctx, sock, p)
			}
			if outs, ok, err := r.runText(ctx, sock, cmds); ok {
				return outs, err
			}
		}
		return r.execRunner().Run(ctx, sock, cmds...)
	}
	outs, _, err := r.runConn(ctx, sock, cmds, cmds)
	return outs, err
}

// runConn runs cmds over the socket's connection, or runs fallback with the
// exec runner (viaExec) when there is no connection; a nil fallback then
// runs nothing and returns ErrControlLost.
func (r *ControlRunner) runConn(ctx context.Context, sock Socket, cmds, fallback []Command) (outs [][]byte, viaExec bool, err error) {
	toExec := func() ([][]byte, bool, error) {
		if fallback == nil {
			return nil, true, fmt.Errorf("%w: no connection", ErrControlLost)
		}
		outs, err := r.execRunner().Run(ctx, sock, fallback...)
		return outs, true, err
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	if ctx.Err() != nil {
		return nil, false, ctxError(ctx, cmds, start)
	}
	for attempt := 0; attempt < 2; attempt++ {
		conn, err := r.conn(ctx, sock)
		if err != nil {
			if ctx.Err() == nil {
				return nil, false, err // the remote host is out of reach
			}
			return nil, false, ctxError(ctx, cmds, start)
		}
		if conn == nil || (fallback != nil && conn.stalled(stallAfter)) {
			return toExec()
		}
		outs, err := conn.tgt.gate.notifying(ctx, cmds, func() ([][]byte, error) { return conn.runFolded(ctx, cmds) })
		if errors.Is(err, errNotSent) {
			continue // the connection died before anything was written
		}
		var ce *CommandError
		if errors.As(err, &ce) && !conn.sameSocket() {
			// Another server took the socket: this answer came from the
			// old one, later calls go to the new one.
			conn.fail(fmt.Errorf("%w: the server behind the socket changed", ErrControlLost))
		}
		if err != nil && ctx.Err() != nil && (err == ctx.Err() || errors.Is(err, ErrControlLost)) {
			return nil, false, ctxError(ctx, cmds, start)
		}
		if errors.Is(err, ErrControlLost) && r.serverGone(ctx, sock, conn, err) {
			return nil, false, fmt.Errorf("%w: %w", ErrNoServer, err)
		}
		return outs, false, err
	}
	return toExec()
}

// stallAfter is how long a connection may leave its oldest call without a
// word before new calls go to exec instead (controlConn.stalled): a round
// trip takes a fraction of a millisecond, and a busy tmux prints guard
// lines all the time. The calls already written wait for their answers;
// nothing is sent twice. Calls return to the connection once it moves.
const stallAfter = 500 * time.Millisecond

// serverGone tells, after a connection ended under a call, a server that
// exited from a lost client: the caller then meets no server, as a call
// that connects afresh does. The socket is looked at only on connect and on
// error (not per call). Locally that is a stat; a remote control client
// ends with its server and its socket is not here, so the host is asked
// with one read-only exec over its SSH master (only on this error path).
func (r *ControlRunner) serverGone(ctx context.Context, sock Socket, conn *engineConn, err error) bool {
	if conn.sockInfo != nil {
		_, serr := conn.stat(conn.sockPath)
		return errors.Is(serr, fs.ErrNotExist)
	}
	if r.Via == nil || ctx.Err() != nil || !errors.Is(err, errTmuxEnded) {
		return false // a connection the network lost: the host cannot be asked
	}
	ctx, cancel := context.WithTimeout(ctx, serverGoneBound)
	defer cancel()
	_, perr := r.execRunner().Run(ctx, sock, Command{"list-sessions", "-F", "x"})
	return errors.Is(perr, ErrNoServer)
}

// errTmuxEnded marks a control connection that tmux itself ended (%exit),
// as opposed to one whose transport broke. Its text is empty: it marks the
// chain for errors.Is and adds nothing to the message.
var errTmuxEnded = errors.New("")

// serverGoneBound bounds serverGone's question to a remote host: one exec
// over a live SSH master takes tens of milliseconds.
const serverGoneBound = 5 * time.Second

// conn returns the socket's live connection, connecting when there is none
// or the server behind the socket changed. It returns nil (and no error)
// when the call should go to exec instead; an error when ctx ended, or
// when a remote host is out of reach (exec would only fail the same way).
func (r *ControlRunner) conn(ctx context.Context, sock Socket) (*engineConn, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, nil
	}
	if r.socks == nil {
		r.socks = make(map[Socket]*ctlSocket)
	}
	s := r.socks[sock]
	if s == nil {
		s = &ctlSocket{sem: make(chan struct{}, 1)}
		r.socks[sock] = s
	}
	r.mu.Unlock()
	if c := s.live.Load(); c != nil && !c.isDead() {
		return c, nil // concurrent calls share it without waiting on each other
	}

	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.sem }()
	if c := s.conn; c != nil {
		if !c.isDead() && c.sameSocket() {
			return c, nil
		}
		if r.Via != nil && c.clientPID != 0 {
			// Its ssh session may have died with output pending: then
			// the remote client stays attached (see StrayClients).
			straysOf(r.Via).Add(sock, c.clientPID)
		}
		c.fail(fmt.Errorf("%w: the server behind the socket changed", ErrControlLost))
		s.conn = nil
		s.live.Store(nil)
	}
	if time.Now().Before(s.failUntil) {
		return nil, nil
	}
	c, retry, err := r.connect(ctx, sock)
	if c == nil {
		if errors.Is(err, ErrHostUnreachable) || errors.Is(err, ErrTmuxMissing) {
			return nil, err
		}
		switch {
		case errors.Is(err, ErrTimeout):
			// The client started but did not attach: tmux (or whatever
			// runs as tmux) hangs on it. Calls go to exec meanwhile, and
			// the pause doubles while it keeps happening.
			s.backoff = min(max(2*s.backoff, 10*time.Second), 5*time.Minute)
			s.failUntil = time.Now().Add(s.backoff)
		case !retry:
			s.failUntil = time.Now().Add(time.Second)
		}
		return nil, ctx.Err()
	}
	s.backoff = 0
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		c.fail(fmt.Errorf("%w: runner closed", ErrControlLost))
		return nil, nil
	}
	if r.Via != nil {
		// Best effort: a failure keeps the pids for the next connection.
		_ = reapStrays(ctx, c.controlConn, straysOf(r.Via), sock)
	}
	s.conn = c
	s.live.Store(c)
	if s.connected {
		metrics.ControlReconnected()
	}
	s.connected = true
	return c, nil
}

// connect picks a session with one exec'd list-sessions and attaches a
// control client to it. It returns nil when there is nothing to attach to
// (retry: the next call should try again) or the attach failed; err, when
// set, is why the attach failed.
func (r *ControlRunner) connect(ctx context.Context, sock Socket) (c *engineConn, retry bool, err error) {
	fields := []string{"pid", "start_time", "socket_path", "session_activity", "session_id"}
	outs, err := r.execRunner().Run(ctx, sock, Command{"list-sessions", "-F", Format(fields...)})
	if err != nil {
		if errors.Is(err, ErrHostUnreachable) || errors.Is(err, ErrTmuxMissing) {
			return nil, false, err
		}
		return nil, true, nil // no server, or no sessions: exec answers this call
	}
	rows, err := ParseRows(outs[0], fields)
	if err != nil || len(rows) == 0 {
		return nil, true, nil
	}
	// Attach to the most recently used session: the one an exec client
	// would take as current, so attaching changes no one's choice.
	best := rows[0]
	for _, row := range rows[1:] {
		a, _ := strconv.ParseInt(row["session_activity"], 10, 64)
		b, _ := strconv.ParseInt(best["session_activity"], 10, 64)
		if a > b {
			best = row
		}
	}
	if _, err := ParseSessionID(best["session_id"]); err != nil {
		return nil, false, nil
	}
	want := ServerIdentity{PID: best["pid"], StartTime: best["start_time"]}
	stat := r.stat
	if stat == nil {
		stat = os.Stat
	}
	var sockInfo os.FileInfo
	if r.Via == nil {
		if sockInfo, err = stat(best["socket_path"]); err != nil {
			return nil, true, nil
		}
	}

	attach := Command{"attach-session", "-f", "no-output,ignore-size", "-t", best["session_id"]}
	argv := append([]string{"-u", "-N"}, sock.Args()...)
	argv = append(append(argv, "-C"), attach...)
	wait := r.AttachTimeout
	if wait <= 0 {
		wait = 3 * time.Second
	}
	if r.Via != nil {
		wait += r.Via.StartTimeout()
	}
	// See attachGate: while the client identifies, nothing of ours may make
	// tmux notify every control client.
	tgt := targetOf(r.bin(), r.Env, sock, r.Via)
	gctx, gcancel := context.WithTimeout(ctx, gateWait)
	started, err := tgt.gate.enterStart(gctx)
	gcancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, true, nil // exec answers this call; the next one tries again
	}
	var cc *controlConn
	if r.Via != nil {
		cc, argv, err = startRemoteControl(ctx, r.Via, r.bin(), r.Env, sock, best["session_id"], "no-output,ignore-size", nil, tgt)
	} else {
		cc, err = startControl(append([]string{r.bin()}, argv...), r.Env, nil, tgt)
	}
	if err != nil {
		started()
		return nil, false, err
	}
	if r.OnConnect != nil {
		r.OnConnect(argv)
	}
	c = &engineConn{controlConn: cc, sockPath: best["socket_path"], sockInfo: sockInfo, stat: stat}
	err = c.waitAttached(ctx, wait, attach)
	c.endStart(started, err) // identified once the attach ran
	if err != nil {
		var ce *CommandError
		refused := errors.As(err, &ce)
		c.fail(fmt.Errorf("%w: attach failed: %v", ErrControlLost, err))
		if !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
			c.wait() // refused or gone: it exits at once
		}
		if r.Via != nil && !refused {
			return nil, false, c.remoteStartError(r.Via, err, wait)
		}
		return nil, !refused, err
	}
	outs, err = c.run(ctx, []Command{{"display-message", "-p", "#{pid} #{start_time} #{client_pid}"}}, nil)
	if err != nil {
		c.fail(fmt.Errorf("%w: %v", ErrControlLost, err))
		return nil, errors.Is(err, errNotSent) || errors.Is(err, ErrControlLost), nil
	}
	got := strings.Fields(string(outs[0]))
	if len(got) == 3 {
		c.clientPID, _ = strconv.Atoi(got[2])
		got = got[:2]
	}
	if len(got) != 2 || got[0] != want.PID || got[1] != want.StartTime {
		c.fail(fmt.Errorf("%w: attached to another server than the one listed", ErrControlLost))
		return nil, true, nil
	}
	c.id = want
	return c, true, nil
}

// CheckRemoteDir is ExecRunner.CheckRemoteDir on this runner's host: the
// check is a shell command, not tmux's, so it runs over the one-off path
// whether or not a control connection is up.
func (r *ControlRunner) CheckRemoteDir(ctx context.Context, path string) error {
	return r.execRunner().CheckRemoteDir(ctx, path)
}

// ExecFallback is the runner for calls that must not share the connection
// (Client.RunChild uses it for wait-for).
func (r *ControlRunner) ExecFallback() Runner { return r.execRunner() }

// ClientPIDs returns the process ids of the live control clients, so
// results such as session_attached can leave our own clients out.
func (r *ControlRunner) ClientPIDs() []int {
	r.mu.Lock()
	socks := make([]*ctlSocket, 0, len(r.socks))
	for _, s := range r.socks {
		socks = append(socks, s)
	}
	r.mu.Unlock()
	var pids []int
	for _, s := range socks {
		s.sem <- struct{}{}
		switch {
		case s.conn == nil || s.conn.isDead():
		case s.conn.clientPID != 0:
			pids = append(pids, s.conn.clientPID)
		case s.conn.pid() != 0:
			pids = append(pids, s.conn.pid())
		}
		<-s.sem
	}
	return append(pids, r.textPIDs()...)
}
