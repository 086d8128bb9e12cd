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
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/control"
)

// controlConn is one running tmux client in control mode. Both the
// control-mode engine (ControlRunner) and the output watchers (Watcher)
// build on it, so process start, framing, the reply queue with its nonce
// checks, and shutdown and reaping exist once.
//
// It does not know how tmux is reached: it runs the argv it is given
// (argv[0] is the program), today "tmux -S … -C attach-session …", later
// possibly "ssh host tmux -C …". The client process is started with
// startChild, so it dies with this process (see child_linux.go), and it
// detaches on EOF of its stdin, which only this process holds.
//
// Every reply block with flag 1 belongs to the oldest pending call; a
// block nobody waits for, a block where a call's nonce marker was due, or
// a line outside any block means pane text forged framing: the connection
// is then failed, never resynchronised. The first block without flag 1 is
// the reply of the attach command on the command line; everything else
// (notifications) goes to onEvent on the reader goroutine.
type controlConn struct {
	proc  *exec.Cmd
	stdin *os.File

	wmu sync.Mutex // orders writes and pending appends

	pmu     sync.Mutex
	pending []*ctlCall
	// heard is when tmux last printed a line of a reply (unix
	// nanoseconds; notifications do not count, they come whether or not
	// the queue moves): a connection with calls pending and nothing heard
	// for a while has its command queue blocked (see stalled).
	heard     atomic.Int64
	dead      chan struct{}
	deadErr   error
	exited    chan struct{}
	readDone  chan struct{}
	closeOnce sync.Once
	// drainUntil is the end marker of the last call written before the
	// connection failed; stdin is closed once it is read. Guarded by pmu.
	drainUntil string

	attached  chan struct{} // closed when the attach command's reply came
	attachErr string        // its error, written before attached is closed

	stderr bytes.Buffer // guarded by pmu (through stderrWriter)

	// onEvent receives every notification on the reader goroutine, while
	// the connection is live. It must not block for long.
	onEvent func(control.Event)

	// tgt, when set, is the gate of the client's tmux server and a round
	// trip to it: the client detaches only as a notifier (see attachGate).
	tgt *ctlTarget
	// mayDetach is closed once the connection, failed, may detach.
	mayDetach chan struct{}

	// startLine, when set, is a line the remote command prints just
	// before it starts tmux: the client runs behind a remote login shell,
	// whose dotfiles may print anything first, so every line up to and
	// including this one is dropped. Set before the reader starts.
	startLine string
}

// errNotSent: the connection was already dead, nothing was written.
var errNotSent = errors.New("tmux control connection closed before sending")

type stderrWriter struct{ c *controlConn }

func (w stderrWriter) Write(p []byte) (int, error) {
	w.c.pmu.Lock()
	defer w.c.pmu.Unlock()
	if w.c.stderr.Len() < 4096 {
		w.c.stderr.Write(p[:min(len(p), 4096-w.c.stderr.Len())])
	}
	return len(p), nil
}

// startControl starts argv as a control-mode client. Its stdin and stdout
// are pipes created close-on-exec, so no other child inherits them: the
// client sees EOF on its stdin as soon as this process lets go of it or
// dies, and exits.
func startControl(argv []string, env []string, onEvent func(control.Event), tgt *ctlTarget) (*controlConn, error) {
	return startControlOpts(argv, env, onEvent, "", nil, tgt)
}

// startControlOpts is startControl with the remote options: startLine (see
// controlConn.startLine) and release, called once the process has exited.
func startControlOpts(argv []string, env []string, onEvent func(control.Event), startLine string, release func(), tgt *ctlTarget) (*controlConn, error) {
	if len(argv) == 0 {
		return nil, errors.New("tmux: empty control client argv")
	}
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
	c := &controlConn{stdin: inW, dead: make(chan struct{}), exited: make(chan struct{}),
		readDone: make(chan struct{}), attached: make(chan struct{}), onEvent: onEvent, startLine: startLine,
		tgt: tgt, mayDetach: make(chan struct{})}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = stderrWriter{c}
	if env != nil {
		cmd.Env = env
	}
	err = startChild(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		if release != nil {
			release()
		}
		return nil, startError(argv[0], err)
	}
	c.proc = cmd
	metrics.ControlStarted()
	go func() {
		c.read(outR)
		close(c.readDone)
	}()
	go func() {
		_ = cmd.Wait()
		metrics.ControlEnded()
		if release != nil {
			release()
		}
		close(c.exited)
		// A process the client left behind may hold the pipe open: once
		// the client is gone, give the reader a moment for what is
		// buffered, then stop it.
		select {
		case <-c.readDone:
		case <-time.After(time.Second):
		}
		outR.Close()
	}()
	return c, nil
}

// pid is the client's process id (tmux lists it as #{client_pid}).
func (c *controlConn) pid() int {
	if c.proc == nil || c.proc.Process == nil {
		return 0
	}
	return c.proc.Process.Pid
}

func (c *controlConn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// err is why the connection ended (nil while it is live).
func (c *controlConn) err() error {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.deadErr
}

// fail ends the connection once: every pending call gets err and no new
// call is written. The client is then detached by closing its stdin, but
// only once tmux has answered everything already written (tmux 3.3a can
// crash when a control client goes away while its commands are still
// running or being answered): the reader watches for the end marker of the
// last call written, with a time limit, and the process is killed if it
// does not exit.
func (c *controlConn) fail(err error) {
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
	go c.detach(len(pending) == 0)
}

// detach lets the failed client go: at once when nothing was pending,
// else once tmux has answered what was written (the reader closes stdin at
// the drain marker), within about two seconds, then by killing it. It
// holds the server's attachGate as a notifier from before the client may
// go until tmux has dealt with its going (the client exited, then one
// round trip more), so no control client of ours is half identified when
// tmux tells every control client that this one detached.
func (c *controlConn) detach(now bool) {
	if c.tgt != nil {
		leave, _ := c.tgt.gate.enterNotify(context.Background())
		defer leave()
	}
	close(c.mayDetach)
	if now {
		c.closeStdin()
	}
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		c.closeStdin()
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			_ = c.proc.Process.Kill()
			select {
			case <-c.exited:
			case <-time.After(time.Second):
			}
		}
	}
	if c.tgt != nil && c.tgt.sync != nil {
		c.tgt.sync()
	}
}

func (c *controlConn) closeStdin() { c.closeOnce.Do(func() { c.stdin.Close() }) }

// drained reports whether line is the end marker a failed connection
// waits for before detaching.
func (c *controlConn) drained(line []byte) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.drainUntil != "" && string(line) == c.drainUntil
}

// settle waits (up to d) until no call is in flight.
func (c *controlConn) settle(d time.Duration) {
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

// wait blocks until the client process has exited and was reaped (after
// fail; fail kills it within about three seconds).
func (c *controlConn) wait() {
	select {
	case <-c.exited:
	case <-time.After(4 * time.Second):
	}
}

// attachRefusal is tmux's error for the attach command, once it answered.
func (c *controlConn) attachRefusal() string {
	select {
	case <-c.attached:
		return c.attachErr
	default:
		return ""
	}
}

// close fails the connection with err and waits until the client exited.
func (c *controlConn) close(err error) {
	c.fail(err)
	c.wait()
}

// waitAttached waits for the reply to the attach command on the command
// line. Nothing may be sent before it: tmux would run those commands for a
// client with no session yet, and a client that goes away while its attach
// is still queued can crash tmux 3.3a. It returns tmux's refusal as a
// *CommandError, ErrTimeout when tmux did not answer within d (a hanging
// client must not hold every call), or the connection's error.
func (c *controlConn) waitAttached(ctx context.Context, d time.Duration, attach Command) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.attached:
		if c.attachErr != "" {
			return newCommandError(attach, c.attachErr, 1)
		}
		if c.isDead() {
			return c.err()
		}
		return nil
	case <-c.dead:
		return c.err()
	case <-t.C:
		return fmt.Errorf("%w after %s: attaching a control client (%s)", ErrTimeout, d, attach[0])
	case <-ctx.Done():
		return ctx.Err()
	}
}

type ctlResult struct {
	outs [][]byte
	err  error
}

// ctlCall is one call in flight. Its line is "c0 ; n0 ; c1 ; n1 ; ... ; cN"
// where every n is "display-message -p <nonce>-<i>", followed by a second
// line "display-message -p <nonce>-end", which is also the last command's
// marker. tmux answers every command that runs with one block; on an error
// it drops the rest of that line, but the end line always runs. The nonces
// are random per call, so pane text inside a reply cannot forge them: a
// block that does not arrive exactly where expected means the stream is
// out of step.
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

	// before, when set, runs on the reader goroutine once the last
	// command's reply has been read, so it sees the notification stream
	// exactly up to that reply (a watcher starts a subscription there).
	before    func()
	beforeDue bool // guarded by the connection's pmu

	// folded: the end marker is the last line of the last command's own
	// reply (see foldable), not a command of its own.
	folded bool

	sent time.Time // when the call was written (set under pmu)
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
		if c.i == len(c.cmds)-1 && c.before != nil {
			c.beforeDue = true
		}
		if b.Error {
			msg := strings.TrimSpace(string(b.Output()))
			if c.i == 0 {
				// A line tmux could not build (an unknown flag, too many
				// arguments) runs nothing, as exec refuses the whole chain;
				// exec's message has no "parse error: " in front.
				msg = strings.TrimPrefix(msg, "parse error: ")
			}
			c.err = newCommandError(c.cmds[c.i], msg, 1)
			if c.folded {
				// tmux drops the rest of the line, folded marker and all.
				return true, ""
			}
			c.phase = phaseEnd
			return false, ""
		}
		if c.folded && c.i == len(c.cmds)-1 {
			n := len(b.Lines)
			switch {
			case overflow:
				c.big = true
				return true, ""
			case n == 0 || string(b.Lines[n-1]) != c.nonceLine(-1):
				return false, "a reply without its end marker"
			}
			b.Lines = b.Lines[:n-1]
		}
		out := b.Output()
		c.size += len(out)
		if overflow || c.size > maxOutput {
			c.big = true
			out = nil
		}
		c.outs = append(c.outs, out)
		if c.folded && c.i == len(c.cmds)-1 {
			return true, ""
		}
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

// send writes one call (framed with its nonce markers) without waiting for
// the reply, which arrives on the returned call's done channel. before:
// see ctlCall. A caller that never reads done loses nothing: replies stay
// in order.
func (c *controlConn) send(ctx context.Context, cmds []Command, before func()) (*ctlCall, error) {
	return c.sendCall(ctx, &ctlCall{cmds: cmds, before: before})
}

func (c *controlConn) sendCall(ctx context.Context, call *ctlCall) (*ctlCall, error) {
	cmds := call.cmds
	call.nonce = newNonce(12)
	call.done = make(chan ctlResult, 1)
	argvs := make([][]string, 0, 2*len(cmds))
	for i, cmd := range cmds {
		if i == len(cmds)-1 && call.folded {
			last := append(Command{}, cmd...)
			last[len(last)-1] += "\n" + call.nonceLine(-1)
			cmd = last
		}
		argvs = append(argvs, cmd)
		if i < len(cmds)-1 {
			argvs = append(argvs, []string{"display-message", "-p", call.nonceLine(i)})
		}
	}
	line, err := control.Join(argvs...)
	if err != nil {
		return nil, fmt.Errorf("tmux: %w", err)
	}
	var data []byte
	if call.folded {
		data = []byte(line + "\n")
	} else {
		end, _ := control.Quote([]string{"display-message", "-p", call.nonceLine(-1)})
		data = []byte(line + "\n" + end + "\n")
	}

	c.wmu.Lock()
	c.pmu.Lock()
	if c.deadErr != nil {
		c.pmu.Unlock()
		c.wmu.Unlock()
		return nil, errNotSent
	}
	call.sent = time.Now()
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
		// Failed before anyone else may write after a partial line; the
		// client is detached through the gate (see detach), never here:
		// a stuck pipe is what a busy tmux server shows, and a detach it
		// tells every control client about must not meet one of ours
		// that is identifying.
		c.fail(fmt.Errorf("%w: writing the command: %v", ErrControlLost, werr))
		c.wmu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if n == 0 {
			return nil, errNotSent
		}
		return nil, fmt.Errorf("%w: writing the command: %v; it may or may not have run", ErrControlLost, werr)
	}
	c.wmu.Unlock()
	return call, nil
}

// run sends one call and waits for its reply. When ctx ends first, the
// reply is read and dropped when it comes; if tmux has not even begun to
// answer the oldest call by the deadline, the connection is stuck and is
// failed, so later calls do not queue behind it. The returned error is
// ctx's own when ctx ended.
func (c *controlConn) run(ctx context.Context, cmds []Command, before func()) ([][]byte, error) {
	return c.runCall(ctx, &ctlCall{cmds: cmds, before: before})
}

// runFolded is run for the engine's calls on the shared connection, which
// never carries pane text: when the last command is a display-message of
// one of our row formats (foldable), its end marker is the last line of
// that command's own reply instead of a command of its own, one command
// fewer for tmux to run per call (a get_pane_info is one command instead
// of two). The marker still proves the reply is the call's own; a reply
// that ends in an error is the call's last (tmux drops the rest of the
// line), as every earlier block was checked against its nonce and replies
// come in order.
func (c *controlConn) runFolded(ctx context.Context, cmds []Command) ([][]byte, error) {
	return c.runCall(ctx, &ctlCall{cmds: cmds, folded: foldable(cmds)})
}

// foldable: the last command is "display-message -p ... <format>" with one
// of our row formats as its last argument, to which the end marker can be
// appended as a line of its own.
func foldable(cmds []Command) bool {
	if len(cmds) == 0 {
		return false
	}
	last := cmds[len(cmds)-1]
	if len(last) < 3 || (last[0] != "display-message" && last[0] != "display") || !strings.HasPrefix(last[len(last)-1], rowStart) {
		return false
	}
	for _, a := range last[1 : len(last)-1] {
		if a == "-p" {
			return true
		}
	}
	return false
}

// stalled reports whether the oldest call still pending was written more
// than d ago and tmux has printed no reply line since d ago: the client's command
// queue is blocked, and a call written now would wait behind it. A user's
// hook does this: tmux runs an after-<command> hook in the queue of the
// client whose command fired it, so a hook's run-shell (without -b) holds
// every later command of this connection until it ends. Under load tmux
// prints guard lines continuously, so a busy connection is not stalled.
func (c *controlConn) stalled(d time.Duration) bool {
	c.pmu.Lock()
	if len(c.pending) == 0 {
		c.pmu.Unlock()
		return false
	}
	since := c.pending[0].sent
	c.pmu.Unlock()
	if heard := time.Unix(0, c.heard.Load()); heard.After(since) {
		since = heard
	}
	return time.Since(since) > d
}

func (c *controlConn) runCall(ctx context.Context, call *ctlCall) ([][]byte, error) {
	call, err := c.sendCall(ctx, call)
	if err != nil {
		return nil, err
	}
	select {
	case res := <-call.done:
		if res.err != nil && errors.Is(res.err, ErrControlLost) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return res.outs, res.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.pmu.Lock()
			stuck := len(c.pending) > 0 && c.pending[0] == call && call.phase == phaseCmd && call.i == 0
			c.pmu.Unlock()
			if stuck {
				c.fail(fmt.Errorf("%w: no reply within the deadline", ErrControlLost))
			}
		}
		return nil, ctx.Err()
	}
}

// read is the connection's only reader. It parses every line, hands reply
// blocks to the oldest pending call and notifications to onEvent, and
// never waits for a caller.
func (c *controlConn) read(out io.Reader) {
	br := bufio.NewReaderSize(out, 256<<10)
	p := control.Parser{MaxBlock: maxOutput}
	// One line buffer for the whole stream (the parser copies what it
	// keeps): %output lines are the hot path of every wait.
	var line []byte
	attached := false
	noise := c.startLine != ""
	for {
		var err error
		line, err = readLine(br, line[:0], maxOutput+1)
		if noise && err == nil {
			if string(bytes.TrimSuffix(line, []byte("\r"))) == c.startLine {
				noise = false
			}
			continue
		}
		if err != nil {
			// The client's last words (ssh's "Timeout, server not
			// responding", tmux's "server exited") reach stderr through
			// exec's copying goroutine, which may still be behind the end
			// of stdout: wait, briefly, for the process to be reaped so
			// the error names its reason.
			if errors.Is(err, io.EOF) {
				select {
				case <-c.exited:
				case <-time.After(time.Second):
				}
			}
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
				go func() {
					<-c.mayDetach
					c.closeStdin()
				}()
			}
			continue
		}
		switch ev := p.Parse(line).(type) {
		case nil: // a line of a reply: the queue is moving
			c.heard.Store(time.Now().UnixNano())
		case *control.Block:
			c.heard.Store(time.Now().UnixNano())
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
				c.fail(fmt.Errorf("%w: %w (a reply nobody waits for)", ErrControlLost, ErrOutOfStep))
				continue
			}
			call := c.pending[0]
			done, bad := call.feed(ev, p.Overflowed())
			before := call.before
			if !call.beforeDue {
				before = nil
			}
			call.beforeDue = false
			if done {
				c.pending = c.pending[1:]
				if len(c.pending) == 0 {
					c.pending = nil
				}
			}
			c.pmu.Unlock()
			if bad != "" {
				c.fail(fmt.Errorf("%w: %w (%s)", ErrControlLost, ErrOutOfStep, bad))
				continue
			}
			if before != nil {
				before()
			}
			if done {
				call.done <- call.result()
			}
		case *control.Stray:
			// tmux writes nothing but blocks and notifications: pane text
			// escaped from a block through a forged guard line.
			c.fail(fmt.Errorf("%w: %w (%s)", ErrControlLost, ErrOutOfStep, ev.Reason))
		case *control.Exit:
			// tmux writes nothing after %exit and runs no more of this
			// client's commands: calls still waiting will get no reply.
			msg := "detached"
			if ev.Reason != "" {
				msg = "exit: " + ev.Reason
			}
			c.fail(fmt.Errorf("%w (%s)%w: the command was not re-sent and may or may not have run", ErrControlLost, msg, errTmuxEnded))
		case *control.Pause:
			// A client attached with pause-after fell behind on this pane
			// and tmux stopped its stream: tell the owner (its subscribers
			// missed output), then resume at once, so the stream restarts
			// with what the pane prints next. The resume is written from
			// another goroutine: the reader must never wait on stdin.
			if c.onEvent != nil {
				c.onEvent(ev)
			}
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
				defer cancel()
				_, _ = c.send(ctx, []Command{{"refresh-client", "-A", ev.Pane + ":continue"}}, nil)
			}()
		default:
			if c.onEvent != nil {
				c.onEvent(ev)
			}
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
