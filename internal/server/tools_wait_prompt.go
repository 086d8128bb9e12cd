package server

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/termtext"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, waitPromptTools) }

// promptWaitArgs are how wait_for_prompt and send_and_wait wait.
type promptWaitArgs struct {
	Until   string  `json:"until" default:"\"input\"" enum:"input,quiet,exit" desc:"input: it reads input; quiet: silent for quiet seconds; exit: shell prompt back, or program ended."`
	Quiet   float64 `json:"quiet" default:"1.0" doc:"Seconds without output that end an until=quiet wait."`
	Timeout float64 `json:"timeout" default:"30.0" desc:"Seconds (> 0), capped by the wait ceiling."`
}

type waitForPromptArgs struct {
	PaneTarget
	promptWaitArgs
	SocketArgs
}

type sendAndWaitArgs struct {
	Keys string `json:"keys" desc:"Text, or one key name such as C-c or Enter."`
	PaneTarget
	Enter           bool `json:"enter" default:"true" doc:"Press Enter after the keys."`
	Literal         bool `json:"literal" default:"false" desc:"Type a key name as text."`
	SuppressHistory bool `json:"suppress_history" default:"false" doc:"Prepend a space (ignorespace keeps it out of history)."`
	promptWaitArgs
	MaxLines *int `json:"max_lines" default:"500" desc:"Tail lines kept (> 0); null: all."`
	Force    bool `json:"force" default:"false" desc:"Type even into a busy program."`
	Secret   bool `json:"secret" default:"false" desc:"For a password prompt: the input is logged nowhere."`
	SocketArgs
}

// WaitForPromptResult is wait_for_prompt's answer.
type WaitForPromptResult struct {
	PaneID           string     `json:"pane_id" desc:"Pane waited on."`
	Outcome          string     `json:"outcome" enum:"waiting_for_input,quiet,exited,timeout" desc:"How the wait ended."`
	Foreground       Foreground `json:"foreground" desc:"What the pane's foreground program is doing now."`
	Tail             []string   `json:"tail" desc:"The screen's last non-blank rows (at most 20 lines / 2000 bytes)."`
	Cursor           string     `json:"cursor" desc:"A capture_since cursor: pass it to capture_since to read only what the pane prints next."`
	ElapsedSeconds   float64    `json:"elapsed_seconds" desc:"Seconds waited."`
	EffectiveTimeout float64    `json:"effective_timeout" desc:"The timeout actually enforced, after the ceiling."`
}

// SendAndWaitResult is send_and_wait's answer.
type SendAndWaitResult struct {
	PaneID           string     `json:"pane_id" desc:"Pane typed into."`
	Outcome          string     `json:"outcome" enum:"waiting_for_input,quiet,exited,timeout" desc:"How the wait ended."`
	Output           []string   `json:"output" desc:"What the program wrote in answer: the rows after the input's own rows, as capture_pane renders them, without the prompt row; on the alternate screen, the screen."`
	Prompt           string     `json:"prompt" desc:"The cursor's row up to the cursor: the program's prompt (e.g. '>>> ', 'Continue? [y/N] ')."`
	Foreground       Foreground `json:"foreground" desc:"What the pane's foreground program is doing now."`
	Cursor           string     `json:"cursor" desc:"A capture_since cursor: pass it to capture_since to read only what the pane prints next."`
	TruncatedLines   int        `json:"truncated_lines" desc:"Output lines dropped from the head by max_lines."`
	LinesMissed      bool       `json:"lines_missed" desc:"Rows could not be located exactly (history trimmed past the input, the screen cleared, tmux paused a flooding pane): output is then the screen above the prompt."`
	ElapsedSeconds   float64    `json:"elapsed_seconds" desc:"Seconds since the keys were typed."`
	EffectiveTimeout float64    `json:"effective_timeout" desc:"The timeout actually enforced, after the ceiling."`
}

func waitPromptTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "wait_for_prompt", Title: "Wait For Prompt", Toolset: "wait", Tier: config.Readonly, Preset: RO, SelfBounded: true,
			Description: "Wait until a pane's program waits for input (the OS tells: a REPL or y/n prompt, a shell back at its prompt), goes quiet, or exits. Returns its state, the last screen rows and a capture_since cursor. To type and wait at once: send_and_wait.",
		}, func(ctx context.Context, c *Call, a waitForPromptArgs) (WaitForPromptResult, error) {
			return c.waitForPrompt(ctx, a)
		}),
		define(Tool{
			Name: "send_and_wait", Title: "Send And Wait", Toolset: "pane", Tier: config.Mutating, Preset: SHL, SelfBounded: true,
			Description: "Type into a pane as send_keys does, wait until the program reads input again (or quiet/exit), and return only its answer: the rows after your input, and its prompt. For REPLs, y/n prompts, TUIs; shell commands: run_command. Refuses a busy program unless force; a password prompt needs secret.",
		}, func(ctx context.Context, c *Call, a sendAndWaitArgs) (SendAndWaitResult, error) {
			return c.sendAndWait(ctx, a)
		}),
	}
}

// How a wait checks the OS. Locally: at once when output arrives after a
// pause (a prompt printed after some work: the program blocks on its read
// microseconds later), then at growing intervals from half a millisecond;
// during continuous output, when it pauses for promptQuietGap. While the
// pane is silent the intervals grow up to promptCheckMax (a program may
// block on its read without printing anything). A check reads /proc (no
// process, a few tens of microseconds). On a remote host a check is a dump
// over the host's control connection: only at pauses, up to once a second.
var (
	promptQuietGap       = 3 * time.Millisecond
	promptBackoff        = []time.Duration{500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond}
	promptCheckMax       = 250 * time.Millisecond
	promptCheckMaxRemote = time.Second
	// promptInputSettle: typed input that woke nothing for this long was
	// taken by the terminal's line editing (a partial line in canonical
	// mode): the program still waits, for the rest of its line.
	promptInputSettle = 250 * time.Millisecond
)

// fgWait is one wait for a pane's foreground program.
type fgWait struct {
	c     *Call
	ps    *paneStream
	sock  tmux.Socket
	row   tmux.Row // fgFields of the pane
	until string
	quiet time.Duration

	start      time.Time
	lastOutput time.Time // the last output, or the start: what quiet counts from
	lastEvent  time.Time // the last output event (zero before the first)
	// before is the foreground just before send_and_wait typed; nil for
	// wait_for_prompt.
	before *foreground.Report
	last   foreground.Report
	// sawBusy: the foreground was seen not waiting during this wait;
	// idleSince: the first of the looks that have all seen it waiting,
	// untouched, since (wait_for_prompt's confirmation).
	sawBusy    bool
	idleSince  *foreground.Report
	confirmFor time.Duration
	dec        termtext.Decoder
	line       atomic.Pointer[string] // newest output line, for progress
	secret     bool
	// received counts the output bytes the wait's stream delivered; raw
	// keeps the last promptRawMax of them (send_and_wait's answer after a
	// full-screen program ends).
	received uint64
	raw      []byte
}

func (c *Call) checkPromptArgs(a promptWaitArgs) (time.Duration, time.Duration, error) {
	switch a.Until {
	case "input", "quiet", "exit":
	default:
		return 0, 0, expectedf("until must be input, quiet or exit")
	}
	if !(a.Quiet >= 0.01) || math.IsInf(a.Quiet, 0) {
		return 0, 0, expectedf("quiet must be at least 0.01 seconds")
	}
	eff, err := c.effectiveTimeout(a.Timeout)
	if err != nil {
		return 0, 0, err
	}
	return eff, time.Duration(a.Quiet * float64(time.Second)), nil
}

func (c *Call) waitForPrompt(ctx context.Context, a waitForPromptArgs) (WaitForPromptResult, error) {
	start := time.Now()
	eff, quiet, err := c.checkPromptArgs(a.promptWaitArgs)
	if err != nil {
		return WaitForPromptResult{}, err
	}
	sctx, scancel := context.WithDeadline(ctx, start.Add(max(eff, waitSetupFloor)))
	defer scancel()
	sock := c.Socket(a.SocketArgs)
	row, err := c.resolvePane(sctx, sock, a.PaneTarget, fgPaneFields)
	if err != nil {
		return WaitForPromptResult{}, err
	}
	pane := row["pane_id"]
	ps, _, err := c.openStreamAt(sctx, sock, tmux.WhereOf(row))
	if err != nil {
		return WaitForPromptResult{}, err
	}
	defer ps.close()
	w := &fgWait{c: c, ps: ps, sock: sock, row: row, until: a.Until, quiet: quiet, start: start, lastOutput: start}
	wctx, cancel := context.WithDeadline(ctx, start.Add(eff))
	defer cancel()
	stop := c.progressEvery(wctx, eff, w.progress(pane, eff))
	outcome := w.run(wctx, 0)
	stop()
	if ctx.Err() != nil && !endedEarly(ctx) {
		return WaitForPromptResult{}, ctx.Err()
	}
	res := WaitForPromptResult{PaneID: pane, Outcome: outcome, Foreground: *foregroundModel(w.last), EffectiveTimeout: eff.Seconds(), Tail: []string{}}
	rctx, rcancel := w.answerContext(ctx)
	defer rcancel()
	if snap, now, err := w.finalRead(rctx); err == nil {
		res.Cursor = c.cursors().put(OwnerFrom(ctx), now)
		res.Tail = capTail(trimBlankTail(snap.Grid[min(snap.HS, len(snap.Grid)):]))
	}
	res.ElapsedSeconds = roundMs(time.Since(start))
	return res, nil
}

// allReceived: the stream has delivered at least every byte the
// foreground wrote since send_and_wait typed, so tmux has read (and drawn)
// all of it and the final read needs no round trip first. Known only
// locally, for the same writers before and after, in a terminal out of
// canonical mode (where the kernel echoes nothing: every byte on the
// terminal came from the program).
func (w *fgWait) allReceived() bool {
	b, r := w.before, w.last
	if b == nil || w.c.host != "" || b.Writers == "" || r.Writers != b.Writers || !r.ModeKnown || r.Canonical || r.Written < b.Written {
		return false
	}
	return w.received >= r.Written-b.Written
}

// answerContext is the context of the reads that build an answer: the
// call's own, or (when the server is stopping) a short one of its own, so a
// wait ended by shutdown still answers with what it has.
func (w *fgWait) answerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return context.WithTimeout(context.WithoutCancel(ctx), 300*time.Millisecond)
	}
	return context.WithTimeout(ctx, 5*time.Second)
}

// finalRead reads the pane as capture_since does, over the wait's own
// connection, for the answer's rows and its cursor.
//
// The program has written its answer before blocking on its read, but
// tmux may not have read those bytes from the terminal yet when the read
// arrives (both ready in one turn of its event loop). A round trip first
// lets tmux finish that turn: whatever the terminal held by then is on the
// screen when the read runs.
func (w *fgWait) finalRead(ctx context.Context) (*sinceSnap, *sinceState, error) {
	pane := w.row["pane_id"]
	if !w.allReceived() {
		if _, err := w.ps.sub.Watcher().Command(ctx, tmux.Command{"display-message", "-p", "-t", pane, "."}); err != nil {
			return nil, nil, notFoundAs(err, "pane", pane)
		}
	}
	outs, err := w.ps.sub.Watcher().Command(ctx, sinceCommands(pane)...)
	if err != nil {
		return nil, nil, notFoundAs(err, "pane", pane)
	}
	snap, now, _, err := w.c.sinceRead(w.c.cursors(), pane, outs)
	return snap, now, err
}

func (w *fgWait) progress(pane string, eff time.Duration) func(time.Duration) string {
	return func(el time.Duration) string {
		msg := fmt.Sprintf("Waiting on pane %s (until %s): %.1fs elapsed, %.1fs left; foreground %s", pane, w.until, el.Seconds(), (eff - el).Seconds(), w.last.State)
		if p := w.line.Load(); p != nil && !w.secret {
			msg += fmt.Sprintf("; last output: %q", *p)
		}
		return msg
	}
}

// run waits until the outcome the wait asks for, or ctx ends ("timeout").
// first is the delay before the first check.
func (w *fgWait) run(ctx context.Context, first time.Duration) string {
	checkMax := promptCheckMax
	if w.c.host != "" {
		checkMax = promptCheckMaxRemote
	}
	timer := time.NewTimer(first)
	defer timer.Stop()
	step := 0
	reset := func(d time.Duration) {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d)
	}
	for {
		select {
		case <-ctx.Done():
			return "timeout"
		case <-w.ps.notify():
			data, err := w.ps.take(ctx)
			if err != nil {
				// The pane is gone: its program ended with it.
				pid := atoi(w.row["pane_pid"])
				cmd := w.last.Command
				if cmd == "" {
					cmd = w.row["pane_current_command"]
				}
				w.last = foreground.ExitedReport(pid, cmd)
				return "exited"
			}
			if len(data) == 0 {
				step = 0
				reset(0) // a layout change (a pane died?): look now
				continue
			}
			w.received += uint64(len(data))
			if w.before != nil {
				w.raw = append(w.raw, data...)
				if over := len(w.raw) - promptRawMax; over > 0 {
					w.raw = append(w.raw[:0], w.raw[over:]...)
				}
			}
			paused := time.Since(w.lastEvent) >= promptQuietGap
			w.lastOutput = time.Now()
			w.lastEvent = w.lastOutput
			if lines := w.dec.Write(data); len(lines) > 0 {
				l := lines[len(lines)-1]
				w.line.Store(&l)
			} else if p := w.dec.Partial(); p != "" {
				w.line.Store(&p)
			}
			step = 0
			if paused && w.c.host == "" {
				reset(0)
			} else {
				reset(promptQuietGap)
			}
		case <-timer.C:
			if outcome := w.check(ctx); outcome != "" {
				return outcome
			}
			next := checkMax
			if step < len(promptBackoff) {
				next = min(promptBackoff[step], checkMax)
				step++
			}
			if w.idleSince != nil {
				if left := w.confirmFor - time.Since(w.idleSince.At); left > 0 && left < next {
					next = left + time.Millisecond/2
				}
			}
			if w.until == "quiet" || w.last.State == foreground.Unknown {
				if left := w.quiet - time.Since(w.lastOutput); left > 0 && left < next {
					next = left
				}
			}
			reset(next)
		}
	}
}

// check looks once; it returns the outcome when the wait is over.
func (w *fgWait) check(ctx context.Context) string {
	var run runFunc
	if w.c.host != "" {
		run = func(ctx context.Context, cmds ...tmux.Command) ([][]byte, error) {
			return w.ps.sub.Watcher().Command(ctx, cmds...)
		}
	}
	r := w.c.inspectForeground(ctx, w.sock, w.row, run)
	if r.State == foreground.Unknown && ctx.Err() != nil {
		return "" // the dump was cut short by the deadline: keep the last answer
	}
	if r.State == foreground.Unknown && w.c.host == "" {
		// The OS could not tell (a process on another terminal, a pid in
		// another namespace): tmux still knows whether the pane died.
		if outs, err := w.ps.sub.Watcher().Command(ctx, tmux.Command{"display-message", "-p", "-t", w.row["pane_id"], "#{pane_dead}"}); err == nil && strings.TrimSpace(string(outs[0])) == "1" {
			r = foreground.ExitedReport(r.PID, w.row["pane_current_command"])
		}
	}
	w.last = r
	quietFor := time.Since(w.lastOutput)
	switch {
	case r.State == foreground.Exited:
		return "exited"
	case w.until == "quiet" || r.State == foreground.Unknown:
		// Where the OS cannot tell, every wait falls back to quiet.
		if quietFor >= w.quiet {
			return "quiet"
		}
	case w.until == "input":
		if w.ready(r) {
			return "waiting_for_input"
		}
	case w.until == "exit":
		if r.ShellAtPrompt && isShell(r.PaneProgram) && w.ready(r) {
			return "exited"
		}
	}
	return ""
}

// promptRawMax bounds the output a send_and_wait keeps of its stream.
const promptRawMax = 1 << 20

// promptConfirm is how long a wait_for_prompt that has seen its program do
// nothing but wait watches it keep waiting before it believes it: keys a
// caller typed just before the call may not have reached the terminal yet,
// and a shell or REPL looks idle until they do.
var promptConfirm = 30 * time.Millisecond

// promptSettle is how long a program of several threads (or processes)
// back at its read after some work must stay there, untouched and silent,
// before the wait believes it.
var promptSettle = 2 * time.Millisecond

// ready: the foreground waits for input with nothing typed left unread,
// and (after send_and_wait typed) it has taken what was typed: it woke
// since (its scheduling count moved, or another group has the terminal),
// or the input has sat for promptInputSettle without waking it.
func (w *fgWait) ready(r foreground.Report) bool {
	if r.State != foreground.WaitingForInput || r.InputQueued > 0 {
		w.sawBusy, w.idleSince = true, nil
		return false
	}
	b := w.before
	switch {
	case b == nil && !w.sawBusy:
		// Waiting since the wait began: keys typed just before the call
		// may not have reached it yet.
		w.confirmFor = promptConfirm
	case b == nil, r.Pgrp != b.Pgrp, r.Runs != 0 && b.Runs != 0 && r.Runs != b.Runs:
		// Back at its read after some work (the input taken). With one
		// thread, that work is done; with several, a worker may still be
		// handing its result to the reader, which looks blocked meanwhile.
		w.confirmFor = 0
		if r.Threads != 1 {
			w.confirmFor = promptSettle
		}
	case time.Since(w.start) >= promptInputSettle:
		w.confirmFor = 0 // typed input that woke nothing: a partial line
	default:
		return false // the input has not reached it yet
	}
	// Believed once it has kept waiting, its reader untouched and the pane
	// silent, for confirmFor: a program can return to its read for a
	// moment while work it started finishes elsewhere (Node's REPL
	// evaluates after an inspector round trip), and then print.
	if w.idleSince == nil || w.idleSince.Pgrp != r.Pgrp || (r.Runs != 0 && w.idleSince.Runs != r.Runs) || w.lastEvent.After(w.idleSince.At) {
		w.idleSince = &r
		return w.confirmFor == 0
	}
	return r.At.Sub(w.idleSince.At) >= w.confirmFor
}

func (c *Call) sendAndWait(ctx context.Context, a sendAndWaitArgs) (SendAndWaitResult, error) {
	start := time.Now()
	eff, quiet, err := c.checkPromptArgs(a.promptWaitArgs)
	if err != nil {
		return SendAndWaitResult{}, err
	}
	if err := positive("max_lines", a.MaxLines); err != nil {
		return SendAndWaitResult{}, err
	}
	if err := pwCheckKeys(a.Keys); err != nil {
		return SendAndWaitResult{}, err
	}
	sctx, scancel := context.WithDeadline(ctx, start.Add(max(eff, waitSetupFloor)))
	defer scancel()
	sock := c.Socket(a.SocketArgs)
	// A pane typed into a moment ago is where it was: its location and
	// process come from the last call (saving a round trip per turn), and
	// anything that does not fit them (a process gone, the entry read
	// below naming another pid) sends the next call to tmux again.
	row, cached := c.promptRows().get(c.host, sock, str(a.PaneTarget.PaneID))
	var before foreground.Report
	if cached {
		if before = c.inspectForeground(sctx, sock, row, nil); before.State == foreground.Exited || before.State == foreground.Unknown {
			cached = false
		}
	}
	if !cached {
		if row, err = c.resolvePane(sctx, sock, a.PaneTarget, fgPaneFields); err != nil {
			return SendAndWaitResult{}, err
		}
		before = c.inspectForeground(sctx, sock, row, nil)
	}
	pane := row["pane_id"]
	if row["pane_dead"] == "1" {
		return SendAndWaitResult{}, deadPane(pane)
	}
	cmds := pwKeyCommands(pane, a.Keys, a.Enter, a.Literal, a.SuppressHistory)
	// A program that reads the terminal wakes now and then (a timer, its
	// garbage collector): one look at a busy moment is no reason to refuse.
	// Only one that stays away from the terminal for a few looks is busy.
	for _, d := range busyLooks {
		if refuseTyping(pane, before, a.Force, a.Secret) == nil || !isBusy(before) {
			break
		}
		select {
		case <-sctx.Done():
		case <-time.After(d):
		}
		before = c.inspectForeground(sctx, sock, row, nil)
	}
	if err := refuseTyping(pane, before, a.Force, a.Secret); err != nil {
		return SendAndWaitResult{}, err
	}
	// Keys wait while a run_command here has typed its wrapper and not yet
	// started (as send_keys does).
	release, err := c.holdInput(sctx, sock, pane)
	if err != nil {
		return SendAndWaitResult{}, err
	}
	// Subscribe, read where the input starts, and type, in one ordered
	// step on the watcher's connection: the stream holds exactly what
	// follows the keystrokes, and the read is the screen they land on.
	first := cmds[:min(len(cmds), pwKeysPerRun)]
	entry := append(promptEntryCommands(pane), first...)
	typed := c.recordTyping(sock, pane, typedBytes(a.Keys, a.Enter, a.Literal, a.SuppressHistory), a.Secret)
	ps, outs, err := c.openStreamAt(sctx, sock, tmux.WhereOf(row), entry...)
	if err != nil {
		typed(err)
		release()
		return SendAndWaitResult{}, err
	}
	defer ps.close()
	typedAt := time.Now()
	if err := c.pwRunChunks(sctx, sock, pane, cmds[len(first):]); err != nil {
		typed(err)
		release()
		return SendAndWaitResult{}, err
	}
	release()
	entryState, col0, err := c.promptEntry(pane, outs)
	if err != nil {
		c.promptRows().forget(c.host, sock, pane)
		return SendAndWaitResult{}, err
	}
	if entryState.PanePID == row["pane_pid"] {
		c.promptRows().put(c.host, sock, row)
	} else {
		c.promptRows().forget(c.host, sock, pane)
	}
	w := &fgWait{c: c, ps: ps, sock: sock, row: row, until: a.Until, quiet: quiet, start: typedAt, lastOutput: typedAt,
		before: &before, last: before, secret: a.Secret}
	wctx, cancel := context.WithDeadline(ctx, start.Add(eff))
	defer cancel()
	stop := c.progressEvery(wctx, eff, w.progress(pane, eff))
	outcome := w.run(wctx, promptBackoff[0])
	stop()
	if ctx.Err() != nil && !endedEarly(ctx) {
		return SendAndWaitResult{}, ctx.Err()
	}
	res := SendAndWaitResult{PaneID: pane, Outcome: outcome, Foreground: *foregroundModel(w.last), EffectiveTimeout: eff.Seconds(), Output: []string{}}
	rctx, rcancel := w.answerContext(ctx)
	defer rcancel()
	snap, now, err := w.finalRead(rctx)
	if err != nil {
		if outcome == "exited" {
			res.LinesMissed = true
			res.ElapsedSeconds = roundMs(time.Since(typedAt))
			return res, nil
		}
		return SendAndWaitResult{}, err
	}
	res.Cursor = c.cursors().put(OwnerFrom(ctx), now)
	output, prompt, missed := answerOf(entryState, col0, snap, typedLines(a.Keys, a.Enter, a.Literal), w.raw)
	if a.Secret {
		output, prompt = maskSecret(output, a.Keys), maskSecret([]string{prompt}, a.Keys)[0]
	}
	res.LinesMissed = missed || ps.lost.Load()
	res.Output, res.TruncatedLines = tailLines(output, a.MaxLines)
	res.Prompt = prompt
	res.ElapsedSeconds = roundMs(time.Since(typedAt))
	return res, nil
}

// busyLooks are the pauses between the looks that tell a busy program
// from one that woke for a moment (about 40 ms in all).
var busyLooks = []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}

// isBusy: the foreground is doing something other than reading the
// terminal.
func isBusy(r foreground.Report) bool {
	switch r.State {
	case foreground.Running, foreground.Sleeping, foreground.Stopped:
		return !r.ReadingTTY
	}
	return false
}

// refuseTyping says why send_and_wait will not type into a foreground.
func refuseTyping(pane string, r foreground.Report, force, secret bool) error {
	if force {
		return nil
	}
	switch r.State {
	case foreground.Running, foreground.Sleeping, foreground.Stopped:
		if r.ReadingTTY {
			break // busy elsewhere (a garbage collector), but reading the terminal
		}
		return expectedf("pane %s's foreground program (%s, pid %d) is %s, not reading the terminal: what you type would wait unread. Wait for it with wait_for_prompt, interrupt it with send_keys C-c, or pass force=true to type anyway.", pane, r.Command, r.PID, r.State)
	case foreground.Exited:
		return deadPane(pane)
	}
	if r.State == foreground.WaitingForInput && r.Secret && !secret {
		return secretPromptf("pane %s is at a password prompt (%s has turned echo off): pass secret=true to type into it; the input is then written nowhere (not in the result, not in any log)", pane, r.Command)
	}
	if secret && r.State == foreground.WaitingForInput && !r.Secret {
		return expectedf("secret=true, but pane %s's terminal echoes what is typed (%s is not at a password prompt): the secret would show on the screen. Pass force=true to type it anyway.", pane, r.Command)
	}
	return nil
}

// promptEntryCommands read, just before the keys, where the input lands:
// the pane's state as capture_since reads it, and the rows from 128 above
// the top of the screen down (a cursor keeps that many above its row).
func promptEntryCommands(pane string) []tmux.Command {
	return []tmux.Command{
		{"list-panes", "-t", pane, "-F", tmux.Format(sinceFields...)},
		{"display-message", "-p", "-t", pane, "%s"},
		{"capture-pane", "-p", "-t", pane, "-S", fmt.Sprint(-sinceRowsAbove), "-E", "-"},
	}
}

// promptEntry turns the entry read into the state a cursor would keep
// (to find the input's row again, however the history moved) and the
// cursor's column.
func (c *Call) promptEntry(pane string, outs [][]byte) (*sinceState, int, error) {
	if len(outs) < 3 {
		return nil, 0, expectedf("pane %s: tmux answered the entry read incompletely", pane)
	}
	st, err := rowFor(outs[0], sinceFields, pane)
	if err != nil {
		return nil, 0, err
	}
	rows := splitRows(outs[2])
	hs := atoi(st["history_size"])
	firstAbs := max(0, hs-sinceRowsAbove) // the capture's first row, counted from the grid's top
	store := c.cursors()
	hashes := make([]uint64, firstAbs, firstAbs+len(rows))
	hashes = append(hashes, store.hashRows(rows)...)
	activity, clock := int64(atoi(st["window_activity"])), int64(atoi(strings.TrimSpace(string(outs[1]))))
	snap := &sinceSnap{HS: hs, Limit: atoi(st["history_limit"]), Width: atoi(st["pane_width"]),
		Height: atoi(st["pane_height"]), CursorY: atoi(st["cursor_y"]), Alt: st["alternate_on"] == "1",
		Activity: activity, Clock: clock, Hashes: hashes}
	state := snap.remember()
	state.Pane, state.PanePID = pane, st["pane_pid"]
	state.Top = max(state.Top, firstAbs)
	state.Rows = hashes[state.Top:min(len(hashes), state.Anchor+1+sinceRowsBelow)]
	return state, atoi(st["cursor_x"]), nil
}

// secretPromptf is the refusal to type unmarked input at a password prompt.
func secretPromptf(format string, args ...any) *ToolError {
	te := expectedf(format, args...)
	te.Type = typeSecretPrompt
	return te
}

// promptRowCache remembers the pane row send_and_wait resolved, per host,
// socket and pane, for a short while: routing and the pid to inspect,
// never an answer.
type promptRowCache struct {
	mu sync.Mutex
	m  map[paneKey]promptRow
}

type promptRow struct {
	row tmux.Row
	at  time.Time
}

const (
	promptRowKeep = 30 * time.Second
	promptRowMax  = 1024
)

func (s *Server) promptRows() *promptRowCache {
	s.promptRowOnce.Do(func() { s.promptRowC = &promptRowCache{m: map[paneKey]promptRow{}} })
	return s.promptRowC
}

func (pc *promptRowCache) get(host string, sock tmux.Socket, pane string) (tmux.Row, bool) {
	if pane == "" {
		return nil, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e, ok := pc.m[paneKey{host, sock, pane}]
	if !ok || time.Since(e.at) > promptRowKeep {
		return nil, false
	}
	return e.row, true
}

func (pc *promptRowCache) put(host string, sock tmux.Socket, row tmux.Row) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.m) >= promptRowMax {
		for k, e := range pc.m {
			if time.Since(e.at) > promptRowKeep || len(pc.m) >= promptRowMax {
				delete(pc.m, k)
			}
		}
	}
	pc.m[paneKey{host, sock, row["pane_id"]}] = promptRow{row: row, at: time.Now()}
}

func (pc *promptRowCache) forget(host string, sock tmux.Socket, pane string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	delete(pc.m, paneKey{host, sock, pane})
}
