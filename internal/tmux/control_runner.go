package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/control"
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
// ErrControlLost and are not re-sent.
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

	mu     sync.Mutex
	socks  map[Socket]*ctlSocket
	closed bool
	once   sync.Once
	exec   *ExecRunner
}

type ctlSocket struct {
	sem       chan struct{} // held while connecting
	conn      *ctlConn      // guarded by sem
	failUntil time.Time     // guarded by sem: skip connecting until then
}

func (r *ControlRunner) bin() string { return binOrDefault(r.Bin) }

func (r *ControlRunner) execRunner() *ExecRunner {
	r.once.Do(func() {
		r.exec = r.Exec
		if r.exec == nil {
			r.exec = &ExecRunner{Bin: r.Bin, Env: r.Env}
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
	for _, s := range socks {
		s.sem <- struct{}{}
		if s.conn != nil {
			s.conn.settle(time.Second)
			s.conn.fail(fmt.Errorf("%w: runner closed", ErrControlLost))
			s.conn.wait()
			s.conn = nil
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
// text can never forge its framing: capture-pane (the screen itself), and
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

// Run implements Runner.
func (r *ControlRunner) Run(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	if !overControl(cmds) {
		return r.execRunner().Run(ctx, sock, cmds...)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if ctx.Err() != nil {
		return nil, ctxError(ctx, cmds)
	}
	for attempt := 0; attempt < 2; attempt++ {
		conn, err := r.conn(ctx, sock)
		if err != nil {
			return nil, ctxError(ctx, cmds)
		}
		if conn == nil {
			return r.execRunner().Run(ctx, sock, cmds...)
		}
		outs, err := conn.run(ctx, cmds)
		if errors.Is(err, errNotSent) {
			continue // the connection died before anything was written
		}
		return outs, err
	}
	return r.execRunner().Run(ctx, sock, cmds...)
}

func ctxError(ctx context.Context, cmds []Command) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%s)", ErrTimeout, cmds[0][0])
	}
	return ctx.Err()
}

// conn returns the socket's live connection, connecting when there is none
// or the server behind the socket changed. It returns nil (and no error)
// when the call should go to exec instead; an error only when ctx ended.
func (r *ControlRunner) conn(ctx context.Context, sock Socket) (*ctlConn, error) {
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
		c.fail(fmt.Errorf("%w: the server behind the socket changed", ErrControlLost))
		s.conn = nil
	}
	if time.Now().Before(s.failUntil) {
		return nil, nil
	}
	c, retry := r.connect(ctx, sock)
	if c == nil {
		if !retry {
			s.failUntil = time.Now().Add(time.Second)
		}
		return nil, ctx.Err()
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		c.fail(fmt.Errorf("%w: runner closed", ErrControlLost))
		return nil, nil
	}
	s.conn = c
	return c, nil
}

// connect picks a session with one exec'd list-sessions and attaches a
// control client to it. It returns nil when there is nothing to attach to
// (retry: the next call should try again) or the attach failed.
func (r *ControlRunner) connect(ctx context.Context, sock Socket) (c *ctlConn, retry bool) {
	fields := []string{"pid", "start_time", "socket_path", "session_activity", "session_id"}
	outs, err := r.execRunner().Run(ctx, sock, Command{"list-sessions", "-F", Format(fields...)})
	if err != nil {
		return nil, true // no server, or no sessions: exec answers this call
	}
	rows, err := ParseRows(outs[0], fields)
	if err != nil || len(rows) == 0 {
		return nil, true
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
		return nil, false
	}
	want := ServerIdentity{PID: best["pid"], StartTime: best["start_time"]}
	sockInfo, err := os.Stat(best["socket_path"])
	if err != nil {
		return nil, true
	}

	argv := append([]string{"-u", "-N"}, sock.Args()...)
	argv = append(argv, "-C", "attach-session", "-f", "no-output,ignore-size", "-t", best["session_id"])
	c, err = startConn(r.bin(), argv, r.Env)
	if err != nil {
		return nil, false
	}
	if r.OnConnect != nil {
		r.OnConnect(argv)
	}
	c.sockPath, c.sockInfo = best["socket_path"], sockInfo
	// Send nothing before the attach has completed: tmux would run those
	// commands for a client with no session yet, and a client that goes
	// away while its attach is still queued can crash tmux 3.3a.
	attachErr, ok := "", false
	select {
	case <-c.attached:
		attachErr, ok = c.attachErr, true
	case <-c.dead:
	case <-ctx.Done():
	}
	if !ok || attachErr != "" || c.isDead() {
		c.fail(fmt.Errorf("%w: attach failed: %s", ErrControlLost, attachErr))
		c.wait()
		return nil, attachErr == ""
	}
	outs, err = c.run(ctx, []Command{{"display-message", "-p", "#{pid} #{start_time}"}})
	if err != nil {
		c.fail(fmt.Errorf("%w: %v", ErrControlLost, err))
		return nil, errors.Is(err, errNotSent) || errors.Is(err, ErrControlLost)
	}
	got := strings.Fields(string(outs[0]))
	if len(got) != 2 || got[0] != want.PID || got[1] != want.StartTime {
		c.fail(fmt.Errorf("%w: attached to another server than the one listed", ErrControlLost))
		return nil, true
	}
	c.id = want
	return c, true
}

// errNotSent: the connection was already dead, nothing was written.
var errNotSent = errors.New("tmux control connection closed before sending")

// ctlConn is one running control client.
type ctlConn struct {
	proc  *exec.Cmd
	stdin *os.File

	wmu sync.Mutex // orders writes and pending appends

	pmu     sync.Mutex
	pending []*ctlCall
	dead    chan struct{}
	deadErr error
	exited  chan struct{}

	closeOnce  sync.Once
	drainUntil string // guarded by pmu

	attached  chan struct{} // closed when the attach command's reply came
	attachErr string        // its error, written before attached is closed

	stderr   bytes.Buffer // guarded by pmu (through stderrWriter)
	sockPath string
	sockInfo os.FileInfo
	id       ServerIdentity
}

type stderrWriter struct{ c *ctlConn }

func (w stderrWriter) Write(p []byte) (int, error) {
	w.c.pmu.Lock()
	defer w.c.pmu.Unlock()
	if w.c.stderr.Len() < 4096 {
		w.c.stderr.Write(p[:min(len(p), 4096-w.c.stderr.Len())])
	}
	return len(p), nil
}

func startConn(bin string, argv []string, env []string) (*ctlConn, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &ctlConn{stdin: inW, dead: make(chan struct{}), exited: make(chan struct{}), attached: make(chan struct{})}
	cmd := exec.Command(bin, argv...)
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = stderrWriter{c}
	if env != nil {
		cmd.Env = env
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	c.proc = cmd
	go func() {
		c.read(outR)
		outR.Close()
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func (c *ctlConn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// sameSocket checks that the socket file is still the one the connection
// was made through: a server restarted on the same path makes a new one.
func (c *ctlConn) sameSocket() bool {
	fi, err := os.Stat(c.sockPath)
	return err == nil && os.SameFile(fi, c.sockInfo)
}

// fail ends the connection once: every pending call gets err and no new
// call is written. The client is then detached by closing its stdin, but
// only once tmux has answered everything already written (tmux 3.3a can
// crash when a control client goes away while its commands are still
// running or being answered): the reader watches for the end marker of the
// last call written, with a time limit, and the process is killed if it
// does not exit.
func (c *ctlConn) fail(err error) {
	c.pmu.Lock()
	if c.deadErr != nil {
		c.pmu.Unlock()
		return
	}
	c.deadErr = err
	close(c.dead)
	pending := c.pending
	c.pending = nil
	if len(pending) > 0 {
		c.drainUntil = pending[len(pending)-1].nonceLine(-1)
	}
	c.pmu.Unlock()
	for _, call := range pending {
		call.done <- ctlResult{err: err}
	}
	if len(pending) == 0 {
		c.closeStdin()
	}
	go func() {
		select {
		case <-c.exited:
			return
		case <-time.After(2 * time.Second):
			c.closeStdin()
		}
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			_ = c.proc.Process.Kill()
		}
	}()
}

func (c *ctlConn) closeStdin() { c.closeOnce.Do(func() { c.stdin.Close() }) }

// drained reports whether line is the end marker a failed connection
// waits for before detaching.
func (c *ctlConn) drained(line []byte) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.drainUntil != "" && string(line) == c.drainUntil
}

// settle waits (up to d) until no call is in flight.
func (c *ctlConn) settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c.pmu.Lock()
		n := len(c.pending)
		c.pmu.Unlock()
		if n == 0 || c.isDead() {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// wait blocks until the client process has exited (after fail).
func (c *ctlConn) wait() {
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
	}
}

type ctlResult struct {
	outs [][]byte
	err  error
}

// ctlCall is one Run in flight. Its line is "c0 ; n0 ; c1 ; n1 ; ... ; cN"
// where every n is "display-message -p <nonce>-<i>", followed by a second
// line "display-message -p <nonce>-end", which is also the last command's
// marker. tmux answers every command that runs
// with one block; on an error it drops the rest of that line, but the end
// line always runs. The nonces are random per call, so pane text inside a
// reply cannot forge them: a block that does not arrive exactly where
// expected means the stream is out of step.
type ctlCall struct {
	cmds  []Command
	nonce string
	i     int  // command being answered
	phase int  // phaseCmd, phaseNonce, phaseEnd
	size  int  // output bytes so far
	big   bool // the reply exceeded maxOutput
	outs  [][]byte
	err   error
	done  chan ctlResult // buffered: the reader never waits for a caller
}

const (
	phaseCmd = iota
	phaseNonce
	phaseEnd
)

func (c *ctlCall) nonceLine(i int) string {
	if i < 0 {
		return c.nonce + "-end"
	}
	return c.nonce + "-" + strconv.Itoa(i)
}

// feed takes the next reply block addressed to this call. It returns true
// when the call is complete and a non-empty reason when the block is not
// the one expected.
func (c *ctlCall) feed(b *control.Block, overflow bool) (bool, string) {
	isNonce := func(want string) bool {
		return !b.Error && len(b.Lines) == 1 && string(b.Lines[0]) == want
	}
	switch c.phase {
	case phaseCmd:
		if b.Error {
			msg := strings.TrimSpace(string(b.Output()))
			if c.i == 0 {
				// A line tmux could not build (an unknown flag, too many
				// arguments) runs nothing, as exec refuses the whole chain;
				// exec's message has no "parse error: " in front.
				msg = strings.TrimPrefix(msg, "parse error: ")
			}
			c.err = newCommandError(c.cmds[c.i], msg, 1)
			c.phase = phaseEnd
			return false, ""
		}
		out := b.Output()
		c.size += len(out)
		if overflow || c.size > maxOutput {
			c.big = true
			out = nil
		}
		c.outs = append(c.outs, out)
		if c.i == len(c.cmds)-1 {
			c.phase = phaseEnd // the end line is the last command's marker
		} else {
			c.phase = phaseNonce
		}
		return false, ""
	case phaseNonce:
		if !isNonce(c.nonceLine(c.i)) {
			return false, "a reply block where the marker was expected"
		}
		c.i++
		if c.i == len(c.cmds) {
			c.phase = phaseEnd
		} else {
			c.phase = phaseCmd
		}
		return false, ""
	default:
		if !isNonce(c.nonceLine(-1)) {
			return false, "a reply block where the end marker was expected"
		}
		return true, ""
	}
}

func (c *ctlCall) result() ctlResult {
	switch {
	case c.err != nil:
		return ctlResult{outs: c.outs, err: c.err}
	case c.big:
		return ctlResult{err: fmt.Errorf("tmux: reply larger than %d bytes", maxOutput)}
	}
	return ctlResult{outs: c.outs}
}

// run sends one call and waits for its reply.
func (c *ctlConn) run(ctx context.Context, cmds []Command) ([][]byte, error) {
	call := &ctlCall{cmds: cmds, nonce: newNonce(12), done: make(chan ctlResult, 1)}
	argvs := make([][]string, 0, 2*len(cmds))
	for i, cmd := range cmds {
		argvs = append(argvs, cmd)
		if i < len(cmds)-1 {
			argvs = append(argvs, []string{"display-message", "-p", call.nonceLine(i)})
		}
	}
	line, err := control.Join(argvs...)
	if err != nil {
		return nil, fmt.Errorf("tmux: %w", err)
	}
	end, _ := control.Quote([]string{"display-message", "-p", call.nonceLine(-1)})
	data := []byte(line + "\n" + end + "\n")

	c.wmu.Lock()
	c.pmu.Lock()
	if c.deadErr != nil {
		c.pmu.Unlock()
		c.wmu.Unlock()
		return nil, errNotSent
	}
	c.pending = append(c.pending, call)
	c.pmu.Unlock()
	deadline, _ := ctx.Deadline()
	_ = c.stdin.SetWriteDeadline(deadline)
	n, werr := c.stdin.Write(data)
	if werr != nil {
		// The client is gone or stuck; a partial line would corrupt the
		// stream, so the connection is dropped. When nothing at all was
		// written the call may safely go elsewhere.
		c.pmu.Lock()
		if k := len(c.pending); k > 0 && c.pending[k-1] == call {
			c.pending = c.pending[:k-1]
		}
		c.pmu.Unlock()
		c.wmu.Unlock()
		c.closeStdin()
		c.fail(fmt.Errorf("%w: writing the command: %v", ErrControlLost, werr))
		if ctx.Err() != nil {
			return nil, ctxError(ctx, cmds)
		}
		if n == 0 {
			return nil, errNotSent
		}
		return nil, fmt.Errorf("%w: writing the command: %v; it may or may not have run", ErrControlLost, werr)
	}
	c.wmu.Unlock()

	select {
	case res := <-call.done:
		if res.err != nil && errors.Is(res.err, ErrControlLost) && ctx.Err() != nil {
			return nil, ctxError(ctx, cmds)
		}
		return res.outs, res.err
	case <-ctx.Done():
		// The reply, when it comes, is read and dropped. If tmux has not
		// answered the oldest call by our deadline the connection is stuck:
		// drop it, so later calls do not queue behind it.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.pmu.Lock()
			stuck := len(c.pending) > 0 && c.pending[0] == call && call.phase == phaseCmd && call.i == 0
			c.pmu.Unlock()
			if stuck {
				c.fail(fmt.Errorf("%w: no reply within the deadline", ErrControlLost))
			}
		}
		return nil, ctxError(ctx, cmds)
	}
}

// read is the connection's only reader. It parses every line, hands reply
// blocks to the oldest pending call, and never waits for a caller.
func (c *ctlConn) read(out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	p := control.Parser{MaxBlock: maxOutput}
	var line []byte
	attached := false
	for {
		var err error
		line, err = readLine(br, line[:0], maxOutput+1)
		if err != nil {
			c.pmu.Lock()
			msg := strings.TrimSpace(c.stderr.String())
			c.pmu.Unlock()
			if msg == "" {
				msg = "client exited"
			}
			c.closeStdin()
			c.fail(fmt.Errorf("%w (%s): the command was not re-sent and may or may not have run", ErrControlLost, msg))
			return
		}
		if c.isDead() {
			if c.drained(line) {
				c.closeStdin()
			}
			continue
		}
		switch ev := p.Parse(line).(type) {
		case nil:
		case *control.Block:
			if ev.Flags != 1 {
				// The first is the attach command's; later ones are hooks.
				if !attached {
					attached = true
					if ev.Error {
						c.attachErr = strings.TrimSpace(string(ev.Output()))
						if c.attachErr == "" {
							c.attachErr = "error"
						}
					}
					close(c.attached)
				}
				continue
			}
			c.pmu.Lock()
			if len(c.pending) == 0 {
				c.pmu.Unlock()
				c.fail(fmt.Errorf("%w: out of step (a reply nobody waits for)", ErrControlLost))
				continue
			}
			call := c.pending[0]
			done, bad := call.feed(ev, p.Overflowed())
			if done {
				c.pending = c.pending[1:]
				if len(c.pending) == 0 {
					c.pending = nil
				}
			}
			c.pmu.Unlock()
			if bad != "" {
				c.fail(fmt.Errorf("%w: out of step (%s)", ErrControlLost, bad))
				continue
			}
			if done {
				call.done <- call.result()
			}
		case *control.Stray:
			// tmux writes nothing but blocks and notifications: pane text
			// escaped from a block through a forged guard line.
			c.fail(fmt.Errorf("%w: out of step (%s)", ErrControlLost, ev.Reason))
		case *control.Exit:
			// tmux writes nothing after %exit and runs no more of this
			// client's commands: calls still waiting will get no reply.
			msg := "detached"
			if ev.Reason != "" {
				msg = "exit: " + ev.Reason
			}
			c.fail(fmt.Errorf("%w (%s): the command was not re-sent and may or may not have run", ErrControlLost, msg))
		}
	}
}

// readLine reads one line without its "\n" into buf, keeping at most limit
// bytes of it (the rest of an overlong line is discarded).
func readLine(br *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) < limit {
			buf = append(buf, chunk[:min(len(chunk), limit-len(buf))]...)
		}
		switch {
		case err == nil:
			if n := len(buf); n > 0 && buf[n-1] == '\n' {
				buf = buf[:n-1]
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
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
		if s.conn != nil && !s.conn.isDead() && s.conn.proc.Process != nil {
			pids = append(pids, s.conn.proc.Process.Pid)
		}
		<-s.sem
	}
	return pids
}
