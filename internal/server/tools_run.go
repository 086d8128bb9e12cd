package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/termtext"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, runTools) }

type runCommandArgs struct {
	Command string `json:"command" doc:"Shell command to run in the target pane."`
	PaneTarget
	Timeout         float64 `json:"timeout" default:"30.0" desc:"Seconds (> 0), capped by the wait ceiling."`
	MaxLines        *int    `json:"max_lines" desc:"Tail lines kept; default: all."`
	SuppressHistory bool    `json:"suppress_history" default:"true" desc:"Keep the command out of shell history (leading space; bash also drops the entry); history_suppressed says if it held. Single-line commands only."`
	SocketArgs
}

type waitForRunArgs struct {
	RunID    string  `json:"run_id" desc:"From a timed-out run_command."`
	Timeout  float64 `json:"timeout" default:"30.0" desc:"Seconds (> 0), capped by the wait ceiling."`
	MaxLines *int    `json:"max_lines" desc:"Tail lines kept; default: all."`
	SocketArgs
}

// RunCommandResult is the reference's run_command answer plus run_id.
type RunCommandResult struct {
	PaneID               string   `json:"pane_id" desc:"Pane the command ran in."`
	ExitStatus           *int     `json:"exit_status" desc:"The command's exit status; null while it is still running."`
	TimedOut             bool     `json:"timed_out" desc:"The wait ended before the command; it keeps running. Pass run_id to wait_for_run to keep waiting."`
	ElapsedSeconds       float64  `json:"elapsed_seconds" desc:"Seconds since the command started."`
	Output               []string `json:"output" desc:"Every line the command printed so far, from its first to its last (tail-truncated by max_lines)."`
	OutputTruncated      bool     `json:"output_truncated" desc:"Lines were cut from the head (max_lines, or the 200000 lines kept); output_truncated_lines counts them."`
	OutputTruncatedLines int      `json:"output_truncated_lines" desc:"Lines cut from the head."`
	LinesMissed          bool     `json:"lines_missed" desc:"Output may be missing, how much is unknown: tmux paused a flooding pane's output, the output stream was lost and followed again (an ssh reconnect), or the run's start was not seen. Addition of tmux-mcp."`
	EffectiveTimeout     float64  `json:"effective_timeout" desc:"The timeout actually enforced, after the ceiling."`
	RunID                *string  `json:"run_id" desc:"Handle for wait_for_run when timed_out is true. Addition of tmux-mcp."`
	HistorySuppressed    *bool    `json:"history_suppressed" desc:"With suppress_history: true when the shell kept the command out of its history (bash: the wrapper deletes its own entry; zsh: HIST_IGNORE_SPACE is set; fish), false when it recorded it (zsh without HIST_IGNORE_SPACE; bash older than 5.0, which cannot delete the newest entry). null when suppress_history was false or the shell cannot tell (sh, dash, ksh: only the leading space is applied). Addition of tmux-mcp."`
}

func runTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "run_command", Title: "Run Command", Toolset: "pane", Tier: config.Mutating, Preset: SHL, SelfBounded: true,
			Description: "Run a shell command in a pane's shell, wait for it, and return its exit status and whole output. Runs in a subshell: cd and export do not persist. On timeout it keeps running: resume with wait_for_run, never re-run it. Needs a shell prompt in the pane; for REPLs and TUIs use send_and_wait.",
		}, func(ctx context.Context, c *Call, a runCommandArgs) (RunCommandResult, error) {
			return c.runCommand(ctx, a)
		}),
		define(Tool{
			Name: "wait_for_run", Title: "Wait For Run", Toolset: "pane", Tier: config.Readonly, Preset: RO, SelfBounded: true,
			Description: "Keep waiting for a command run_command started but did not see finish (timed_out with a run_id). Returns run_command's result with the whole output so far. Runs are kept 10 minutes after they end.",
		}, func(ctx context.Context, c *Call, a waitForRunArgs) (RunCommandResult, error) {
			return c.waitForRun(ctx, a)
		}),
	}
}

// posixShells and fishShells are the foreground commands run_command
// accepts: a pane anywhere else (an editor, a REPL, a pager) would receive
// the wrapper as keystrokes.
var (
	posixShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ksh93": true, "mksh": true,
		"pdksh": true, "oksh": true, "loksh": true, "ash": true, "yash": true, "posh": true, "busybox": true}
	fishShells = map[string]bool{"fish": true}
)

var runStateFields = []string{"pane_id", "window_id", "session_id", "pane_current_command", "alternate_on", "pane_in_mode", "pane_dead", "pid", "start_time", "cursor_x", "pane_width", "pane_height"}

// markerOSC is the private OSC the wrapper prints around the command. tmux's
// terminal ignores an unknown OSC, so it never shows on the screen, but it
// is in the pane's output stream that the watcher receives.
const markerOSC = "7799"

// runRecord is one run_command invocation, alive until collected or
// runKeep after it ends.
type runRecord struct {
	id    string
	owner Owner
	pane  string
	host  string // "" local; the run's stream keeps that host's engine
	sock  tmux.Socket
	// server is the identity (pid/start_time) of the tmux server the run
	// was typed into: a server started later on the same socket numbers
	// its panes from %0 again, and the run is nothing to its panes.
	server  string
	started time.Time
	ps      *paneStream
	begun   chan struct{} // closed when the start marker is seen
	// holdOver is set once other input gave up waiting for the start
	// marker (inputHoldMax): the shell is not running the wrapper (a
	// program or copy mode has the pane), so later input, and every
	// operation of a batch, goes through without waiting again.
	holdOver atomic.Bool

	mu       sync.Mutex
	lines    []string
	dropped  int
	exit     *int
	err      error
	done     chan struct{}
	waiting  bool  // a call is collecting it right now
	expiring bool  // the expiry goroutine runs
	noStart  bool  // the end marker came without the start marker: output unknown
	history  *bool // what the start marker said about history suppression
	// offline is why the run's host stopped answering while the command
	// ran (nil while its output is followed); lostHost is closed when it
	// does, and replaced once the run follows its pane again.
	offline  error
	lostHost chan struct{}
}

// runKeep is how long a finished, uncollected run is kept; runAbandon is
// how long a still-running command is followed after its first wait timed
// out, so a forgotten endless command does not keep a watcher attached for
// ever.
var (
	runKeep    = 10 * time.Minute
	runAbandon = time.Hour
)

const maxRunLines = 200_000

// runRegistry holds the runs of every client. A run belongs to the client
// that started it (its Owner): another client cannot collect it. A pane
// runs one run_command at a time, whoever started it.
type runRegistry struct {
	mu    sync.Mutex
	runs  map[runKey]*runRecord
	busy  map[paneKey]*runRecord // the latest run typed into each pane
	gates map[paneKey]*paneGate  // typing into a pane: run_command writes, other input reads
}

// paneGate orders typing into one pane; it exists while someone uses it.
type paneGate struct {
	sync.RWMutex
	refs int
}

type runKey struct {
	owner Owner
	id    string
}

type paneKey struct {
	host string // ids are per host: %3 here is not %3 on another host
	sock tmux.Socket
	pane string
}

func (s *Server) runs() *runRegistry {
	s.runOnce.Do(func() {
		s.runReg = &runRegistry{runs: map[runKey]*runRecord{}, busy: map[paneKey]*runRecord{}, gates: map[paneKey]*paneGate{}}
	})
	return s.runReg
}

func (g *runRegistry) gate(k paneKey) *paneGate {
	g.mu.Lock()
	defer g.mu.Unlock()
	pg := g.gates[k]
	if pg == nil {
		pg = &paneGate{}
		g.gates[k] = pg
	}
	pg.refs++
	return pg
}

func (g *runRegistry) ungate(k paneKey, pg *paneGate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if pg.refs--; pg.refs == 0 && g.gates[k] == pg {
		delete(g.gates, k)
	}
}

// inFlight is the unfinished run in a pane, if any.
func (g *runRegistry) inFlight(k paneKey) *runRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rec := g.busy[k]; rec != nil && !rec.ended() {
		return rec
	}
	return nil
}

func (g *runRegistry) get(owner Owner, id string) *runRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runs[runKey{owner, id}]
}

// inputHoldMax bounds how long other input to a pane waits for a run's
// start marker: a shell that never runs the wrapper must not block the
// pane for ever.
var inputHoldMax = 5 * time.Second

// promptWait bounds how long run_command waits for a prompt to be drawn
// when the cursor sits at the start of a row.
var promptWait = 300 * time.Millisecond

// holdInput is called by every tool that types or pastes into a pane. While
// a run_command there has typed its wrapper but the shell has not started
// it (no start marker yet), keystrokes would land in the wrapper's line or
// be echoed into the run's output: they wait until the start marker (at most
// inputHoldMax). From then on they go through, so C-c reaches the command.
// The returned release must be called once the input is written: run_command
// cannot type its wrapper in between.
//
// Only a run on the server the input goes to holds it: the first time a
// pending run is found, the socket's server is asked who it is (one round
// trip, only then), and a run of another server (the one it ran on was
// killed or replaced on the socket, and its pump has not caught up) is
// ended instead of waited for.
func (c *Call) holdInput(ctx context.Context, sock tmux.Socket, pane string) (release func(), err error) {
	reg := c.runs()
	k := paneKey{c.host, sock, pane}
	pg := reg.gate(k)
	done := func() {
		pg.RUnlock()
		reg.ungate(k, pg)
	}
	deadline := time.NewTimer(inputHoldMax)
	defer deadline.Stop()
	checked := false
	for {
		pg.RLock()
		rec := reg.inFlight(k)
		if rec == nil || rec.hasBegun() || rec.holdOver.Load() {
			return done, nil
		}
		pg.RUnlock()
		if !checked {
			checked = true
			if now, known := c.serverIdentity(ctx, sock); known && rec.server != "" && now != rec.server {
				rec.serverGone()
				continue
			}
		}
		select {
		case <-rec.begun:
		case <-rec.done:
		case <-deadline.C:
			rec.holdOver.Store(true)
			pg.RLock()
			return done, nil
		case <-ctx.Done():
			reg.ungate(k, pg)
			return nil, ctx.Err()
		}
	}
}

// serverIdentity is pid/start_time of the tmux server on sock, as the
// call's engine reaches it ("" when none runs there); known is false when
// the server could not be asked.
func (c *Call) serverIdentity(ctx context.Context, sock tmux.Socket) (id string, known bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	outs, err := c.tmux.Run(ctx, sock, tmux.Command{"display-message", "-p", tmux.Format("pid", "start_time")})
	switch {
	case errors.Is(err, tmux.ErrNoServer):
		return "", true
	case err != nil || len(outs) == 0:
		return "", false
	}
	rows, err := tmux.ParseRows(outs[0], []string{"pid", "start_time"})
	if err != nil || len(rows) != 1 {
		return "", false
	}
	return tmux.WhereOf(rows[0]).Server, true // as runRecord.server was built
}

// serverGone ends a run whose tmux server is no longer the one on its
// socket: nothing can reach it there any more, so what became of the
// command cannot be known.
func (r *runRecord) serverGone() {
	r.finish(nil, fmt.Errorf("the tmux server pane %s was on is no longer on this socket (it was killed or replaced by a new server): what became of the command is unknown", r.pane))
}

func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (c *Call) runCommand(ctx context.Context, a runCommandArgs) (RunCommandResult, error) {
	if strings.TrimSpace(a.Command) == "" {
		return RunCommandResult{}, expectedf("command must not be blank")
	}
	if strings.IndexByte(a.Command, 0) >= 0 {
		return RunCommandResult{}, expectedf("command must not contain NUL bytes")
	}
	if a.SuppressHistory && strings.ContainsAny(a.Command, "\r\n") {
		return RunCommandResult{}, expectedf("suppress_history needs a single-line command; pass suppress_history=false to run a multi-line command (the shell may then record it)")
	}
	if err := positive("max_lines", a.MaxLines); err != nil {
		return RunCommandResult{}, err
	}
	eff, err := c.effectiveTimeout(a.Timeout)
	if err != nil {
		return RunCommandResult{}, err
	}
	sock := c.Socket(a.SocketArgs)
	// The target, where it lives and its state, in one round trip.
	st, err := c.resolvePane(ctx, sock, a.PaneTarget, runStateFields)
	if err != nil {
		return RunCommandResult{}, err
	}
	pane := st["pane_id"]
	// The cursor at the start of a row: the shell has probably not drawn
	// its prompt yet (a command, run_command's own included, has just
	// ended). Give it a moment, so that the wrapper knows where the prompt
	// ends and the state is the shell's, not its child's.
	for wait := time.Now().Add(promptWait); st["cursor_x"] == "0" && time.Now().Before(wait); {
		select {
		case <-ctx.Done():
			return RunCommandResult{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if st, err = c.resolvePane(ctx, sock, PaneTarget{PaneID: &pane}, runStateFields); err != nil {
			return RunCommandResult{}, err
		}
	}
	reg := c.runs()
	k := paneKey{c.host, sock, pane}
	server := tmux.WhereOf(st).Server
	// A command still running from run_command is what the pane shows: say
	// so (it is not "not a shell"). A run of another server (the one it
	// ran on is gone from the socket) is over.
	if prev := reg.inFlight(k); prev != nil {
		if prev.server == server {
			return RunCommandResult{}, busyPane(pane, prev)
		}
		prev.serverGone()
	}
	shell := strings.TrimPrefix(filepath.Base(st["pane_current_command"]), "-")
	switch {
	case st["pane_dead"] == "1":
		return RunCommandResult{}, deadPane(pane)
	case st["alternate_on"] == "1":
		return RunCommandResult{}, expectedf("pane %s shows a full-screen program (alternate screen); run_command only types into a shell prompt. Use send_keys for TUIs.", pane)
	case st["pane_in_mode"] == "1":
		return RunCommandResult{}, expectedf("pane %s is in copy mode; exit_copy_mode first", pane)
	case !posixShells[shell] && !fishShells[shell]:
		return RunCommandResult{}, expectedf("pane %s is running %q, not a known shell (sh, bash, zsh, dash, ksh, fish...); run_command would type into it. Use send_keys for other programs.", pane, shell)
	}
	id := newRunID()
	var view runView
	view.col, _ = strconv.Atoi(st["cursor_x"])
	view.width, _ = strconv.Atoi(st["pane_width"])
	view.height, _ = strconv.Atoi(st["pane_height"])
	wrapper := runWrapper(shell, a.Command, id, a.SuppressHistory, view)
	rec := &runRecord{id: id, owner: OwnerFrom(ctx), pane: pane, host: c.host, sock: sock, server: server, done: make(chan struct{}), begun: make(chan struct{})}
	// Hold the pane's input lock while registering and typing: input that
	// another tool is writing finishes first, and input that comes later
	// sees this run and waits for its start marker.
	pg := reg.gate(k)
	pg.Lock()
	unlock := func() {
		pg.Unlock()
		reg.ungate(k, pg)
	}
	reg.mu.Lock()
	if prev := reg.busy[k]; prev != nil && !prev.ended() && prev.server == server {
		reg.mu.Unlock()
		unlock()
		return RunCommandResult{}, busyPane(pane, prev)
	}
	reg.busy[k] = rec
	reg.mu.Unlock()
	// Subscribe and type in one ordered step on the watcher connection, so
	// the stream holds exactly what follows the keystrokes.
	rec.started = time.Now()
	// A recording of the pane gets the command as a person would type it,
	// not the wrapper (as the pane shows it: Differences "run-pane").
	typed := c.recordTyping(sock, pane, []byte(a.Command+"\r"), false)
	ps, _, err := c.openStreamAt(ctx, sock, tmux.WhereOf(st),
		clearPromptLine(pane),
		tmux.Command{"send-keys", "-t", pane, "-l", "--", wrapper},
		tmux.Command{"send-keys", "-t", pane, "Enter"})
	if err != nil {
		typed(err)
		reg.remove(rec)
		unlock()
		return RunCommandResult{}, err
	}
	rec.ps = ps
	reg.mu.Lock()
	reg.runs[runKey{rec.owner, id}] = rec
	reg.mu.Unlock()
	unlock()
	go pumpRun(rec)
	return c.collect(ctx, rec, eff, a.MaxLines)
}

func busyPane(pane string, prev *runRecord) error {
	return expectedf("pane %s is already running a command from run_command (run_id %s, started %.1fs ago); wait for it with wait_for_run, or stop it with send_keys C-c, before running another", pane, prev.id, time.Since(prev.started).Seconds())
}

// clearPromptLine empties the shell's input line before run_command types:
// text left there (send_keys with enter=false, a person typing) would
// otherwise run glued to the wrapper, e.g. a pending "rm -rf dir" would get
// our printf as extra arguments. C-e moves to the end of the line and C-u
// deletes back to its start: in readline (bash), zle (zsh), fish and ksh,
// and in a shell without a line editor (dash) the tty's kill character
// erases the line, ^E included. bash and fish keep the text on their kill
// ring, so a person can get it back with C-y.
func clearPromptLine(pane string) tmux.Command {
	return tmux.Command{"send-keys", "-t", pane, "C-e", "C-u"}
}

// runWrapper builds what is typed: one line, whatever the command, so
// that the shell echoes it on consecutive rows with no continuation
// prompts. The command never appears in it as shell syntax: it is a quoted
// argument that a subshell evals (POSIX) or a child fish runs, so a
// trailing comment or an unclosed quote in it cannot swallow the end
// marker, cd and export do not leak, and nothing defined earlier in the
// shell is needed (a fresh shell after exec bash or su works the same).
//
// The wrapper's first action is one printf that erases the rows the shell
// echoed it on and prints the command there, as a person would have typed
// it after the prompt, then the start marker: capture_pane and a person
// watching see "$ echo hi", not the wrapper. v says where the prompt ended
// and how wide the pane is (see runView).
//
// In bash, zsh and fish the shell that runs the command does job control
// (see jobControl), so that tmux, which names a pane after the leader of
// the terminal's foreground process group, shows the command ("sleep",
// "python3") and not the wrapper's subshell.
func runWrapper(shell, command, id string, suppress bool, v runView) string {
	lead := ""
	if suppress {
		lead = " "
	}
	end := fmt.Sprintf(`printf '\033]%s;E;%s;%%d\007' `, markerOSC, id)
	// The command with a newline for each line break it has: a CR typed
	// into a tty is a newline too.
	command = strings.ReplaceAll(strings.ReplaceAll(strings.TrimRight(command, " \t\r\n"), "\r\n", "\n"), "\r", "\n")
	build := func(erase string) string {
		start := `\033]` + markerOSC + ";S;" + id
		if fishShells[shell] {
			if suppress {
				start += ";1"
			}
			// The child fish that runs the command sits under one with a
			// SIGINT handler: on C-c the command dies, the middle fish
			// exits normally with its status, and the shell goes on to
			// the end marker (fish abandons a line whose job SIGINT
			// killed).
			return lead + "begin;set -l c " + fishQuote(command) + ";printf '" + erase + `%s\n` + start + `\007' $c;fish -c ` +
				fishIntGuard + " $c;" + end + "$status;end"
		}
		// The command runs in a subshell inside a subshell that traps
		// SIGINT: on C-c the command ends with status 130 (its job dies,
		// and the inner subshell, which has the default disposition, ends
		// too: see jobControl), but the outer one exits normally with that
		// status, so the interactive shell does not abandon the rest of
		// the line and the end marker is still printed, by the interactive
		// shell once the subshells are gone (the pane's foreground is the
		// shell again when the run ends). The command is the outer
		// subshell's last positional parameter; the eval shifts ours away,
		// so it sees no variable and no argument of ours.
		jc := jobControlFor(shell)
		var params []string // the outer subshell's parameters before the command
		hist := ""
		if suppress {
			hist = historyCheck(shell, id)
		}
		check := hist != ""
		pre := ""
		if check {
			// The check's status travels as the first parameter.
			pre = hist + ";"
			params = append(params, jc.checkStatus)
			start += ";%d"
		}
		guard, restore := "", ""
		if jc.saveTTY {
			params = append(params, `"$(stty -g 2>/dev/null)"`)
			saved := `"$` + strconv.Itoa(len(params)) + `"`
			guard = "stty susp undef 2>/dev/null;"
			restore = ";s=$?;stty " + saved + " 2>/dev/null;exit $s"
		}
		n := strconv.Itoa(len(params) + 1)
		fmtArgs := `"$` + n + `"`
		if check {
			fmtArgs += ` $(($1==0))`
		}
		sub := "(set -- " + strings.Join(append(params, shQuote(command)), " ") + ";printf '" + erase + `%s\n` + start + `\007' ` + fmtArgs +
			";trap : INT;" + jc.outer + guard + "(" + jc.inner + `eval "shift ` + n + `;$` + n + `"` + ")" + restore + ")"
		if jc.wrap != "" {
			sub = jc.wrap + sub + " }"
			if check {
				sub += " $?" // zsh's check runs before the function, which gets its status as $1
			}
		}
		return lead + pre + sub + ";" + end + "$?"
	}
	if v.col == v.width {
		v.col = 0 // the prompt filled its last row: the echo starts on the next one
	}
	if v.width < 10 || v.col < 0 || v.col >= v.width || v.height < 2 {
		return build("")
	}
	// The echo covers rows from the prompt's row down; Enter leaves the
	// cursor on the row below them. Trailing spaces make the line's length
	// 1 more than a multiple of the width: then it covers the same number
	// of rows whatever the prompt's length (a prompt not yet drawn, or
	// text cleared from the line, cannot make the erase miss a row). The
	// numbers have a fixed number of digits, so the length is known before
	// them.
	erase := func(rows int) string { return fmt.Sprintf(`\033[%03dA\033[%04dG\033[J`, rows, v.col+1) }
	n := displayWidth(build(erase(0)))
	want := 1
	if v.col == v.width-1 {
		want = 2 // never end exactly at the margin (readline adds a row there)
	}
	pad := ((want-n)%v.width + v.width) % v.width
	rows := (v.col + n + pad + v.width - 1) / v.width
	if rows >= v.height || rows > 999 {
		return build("") // taller than the pane: the echo cannot be erased
	}
	return build(erase(rows)) + strings.Repeat(" ", pad)
}

// runView is what the wrapper needs to know to erase its own echo: the
// cursor's column when it is typed (where the prompt ends) and the pane's
// size. A zero width turns the erase off.
type runView struct{ col, width, height int }

// displayWidth is the number of cells a line editor takes to echo s: one
// per character, two for a control character (shown as ^X).
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// shQuote quotes s for a POSIX shell on one line: a line of its own for
// each of its lines, joined back by printf in a command substitution.
func shQuote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "'" + strings.ReplaceAll(l, "'", `'\''`) + "'"
	}
	if len(lines) == 1 {
		return lines[0]
	}
	return `"$(printf '%s\n' ` + strings.Join(lines, " ") + `)"`
}

// fishQuote quotes s for fish on one line: single-quoted pieces joined by
// \n, fish's escape for a newline outside quotes.
func fishQuote(s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(p, `\`, `\\`), `'`, `\'`) + "'"
	}
	return strings.Join(parts, `\n`)
}

// historyCheck is what a run that keeps out of history runs first, in the
// interactive shell itself; its exit status says whether the line stayed
// out of the history (0) or not, and the start marker reports it (";1" or
// ";0"). A shell adds a line to its history when it reads it, before
// running it, so settings changed by the line itself come too late for it:
//   - bash honours the leading space only with HISTCONTROL=ignorespace, so
//     the wrapper deletes its own entry (history -d -1, bash >= 5.0) when it
//     is the newest one.
//   - zsh honours the leading space only with HIST_IGNORE_SPACE and cannot
//     delete an entry: the check is whether the option is set.
//
// fish never records a line that starts with a space. Other shells (sh,
// dash, ksh...) get the leading space and the plain marker: "".
func historyCheck(shell, id string) string {
	switch shell {
	case "bash":
		return "case $(builtin history 1) in *" + markerOSC + "?S?" + id + "*) builtin history -d -1 2>/dev/null;; esac"
	case "zsh":
		return "[[ -o histignorespace ]]"
	}
	return ""
}

// fishIntGuard is the middle fish's script: a no-op SIGINT handler, then
// the command (its first argument) in a fish of its own, with job control
// on (it is off in a fish that is not interactive): each job of the
// command gets its own process group and the terminal, and a job that
// SIGINT killed still ends the whole command. C-z stops the program; the
// child fish goes on with the rest of the command, and the stopped program
// is ended by the kernel's SIGHUP when the child fish exits (its process
// group is then orphaned), so the run ends and the pane stays usable.
const fishIntGuard = `'function __tmux_mcp_int --on-signal INT; end; fish -C "status job-control full" -c $argv[1]'`

// jobControl is what a POSIX shell adds to the wrapper so that the shell
// running the command puts each of the command's jobs (a pipeline, a
// simple command) in a process group of its own and hands it the terminal.
// tmux names the pane after the leader of the terminal's foreground
// process group (tcgetpgrp on the pane, then that process's argv[0]): with
// job control that is the command's first process, in turn for each job,
// instead of the wrapper's subshell.
//
// Only bash and zsh can do it in a subshell. dash, mksh and ksh93 ignore
// set -m there (their subshells never do job control), and sh may be any
// of them: those shells get no job control, and tmux shows the shell's
// name while the command runs. yash, posh and the others are left as they
// are too.
type jobControl struct {
	// wrap goes around the outer subshell (closed by " }"); checkStatus
	// is how the outer subshell receives the history check's status.
	wrap, checkStatus string
	// outer runs in the outer subshell before the inner one; inner runs
	// in the inner subshell before the command.
	outer, inner string
	// saveTTY: the outer subshell keeps the terminal's settings (stty -g)
	// as a parameter, disables the suspend character for the run and
	// restores the settings after it.
	saveTTY bool
}

func jobControlFor(shell string) jobControl {
	switch shell {
	case "bash":
		// set -m in the subshell does job control, but a bash subshell
		// neither notices that a job was interrupted (only the job gets
		// SIGINT now) nor sees a job stop (it waits without WUNTRACED).
		// So: the SIGCHLD trap, run as each child is reaped with $? its
		// status, ends the command after a job that exited 130 (killed
		// by SIGINT), as an interactive shell abandons a line; and SIGTSTP
		// is ignored by the outer subshell and so by every job (bash
		// keeps a trapped-ignored TSTP in its children), so C-z cannot
		// leave a stopped job that nothing would ever continue.
		return jobControl{checkStatus: "$?", outer: "trap '' TSTP;", inner: "set -m;trap '[ $? != 130 ] || exit 130' CHLD;"}
	case "zsh":
		// A zsh subshell gives the terminal back after each job to the
		// process group of the shell it was forked from (its $$), not to
		// its own: so the subshells are forked without job control (in
		// a function with local options: the interactive shell's own
		// settings come back when it returns), which keeps them in the
		// interactive shell's process group, and the inner one turns it
		// on, ignoring SIGTTOU so that each job can take the terminal.
		// Since the interactive shell is then in the foreground with them
		// between jobs, its own SIGINT is trapped (locally) so that C-c
		// there cannot make it abandon the end marker. NOTIFY is off so
		// that the end of a background job is not reported. zsh resumes
		// a stopped job in the background (a program that then reads the
		// terminal would be stopped and resumed without end), so the
		// suspend character is disabled during the run. The function
		// sets $0 to (anon): the inner subshell puts the shell's back.
		return jobControl{wrap: "() { setopt localoptions localtraps nomonitor nonotify;trap : INT;", checkStatus: `"$1"`,
			inner: "trap '' TTOU TTIN;0=${ZSH_ARGZERO:-$0};setopt monitor;", saveTTY: true}
	}
	return jobControl{checkStatus: "$?"}
}

// pumpRun feeds a run's output stream through the terminal decoder until
// the end marker arrives or the pane goes away. A remote host that stops
// answering does not end the run: the command goes on there, so the pump
// follows the pane again once the host answers (refollow).
func pumpRun(rec *runRecord) {
	feed := rec.feeder()
	ctx := context.Background()
	for {
		select {
		case <-rec.done:
			rec.ps.close()
			return
		case <-rec.ps.notify():
		}
		data, err := rec.ps.take(ctx)
		if err != nil && rec.host != "" && hostLost(err) {
			feed(data)
			rec.goOffline(err)
			if err = rec.refollow(ctx, feed); err == nil {
				continue
			}
			data = nil
		}
		if err != nil {
			feed(data)
			rec.finish(nil, fmt.Errorf("pane %s went away while the command ran: %w", rec.pane, err))
			continue
		}
		if len(data) == 0 {
			// A layout change: make sure the pane still exists.
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := rec.ps.c.tmux.Locate(cctx, rec.sock, tmux.PaneID(rec.pane)) // the run's host
			cancel()
			if err != nil {
				rec.finish(nil, fmt.Errorf("pane %s went away while the command ran", rec.pane))
			}
			continue
		}
		feed(data)
	}
}

// feeder returns the function that takes the pane's output stream in
// order: it collects the lines between the run's start and end markers and
// finishes the run at the end marker. Output before the start marker (the
// echoed wrapper, earlier output) is never the command's. Only one
// goroutine may call it.
func (rec *runRecord) feeder() func([]byte) {
	var dec termtext.Decoder
	began := false
	prefix := markerOSC + ";"
	dec.OnOSC = func(p string) {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			return
		}
		switch {
		case (rest == "S;"+rec.id || strings.HasPrefix(rest, "S;"+rec.id+";")) && !began:
			var hist *bool
			switch strings.TrimPrefix(rest, "S;"+rec.id) {
			case ";1":
				hist = new(true)
			case ";0":
				hist = new(false)
			}
			rec.mu.Lock()
			rec.history = hist
			rec.mu.Unlock()
			dec.TakeLines()
			dec.ResetLine()
			began = true
			rec.mu.Lock()
			rec.lines, rec.dropped = nil, 0
			rec.mu.Unlock()
			close(rec.begun)
		case strings.HasPrefix(rest, "E;"+rec.id+";"):
			code, err := strconv.Atoi(strings.TrimPrefix(rest, "E;"+rec.id+";"))
			lines := dec.TakeLines()
			if p := dec.Partial(); p != "" {
				lines = append(lines, p)
			}
			dec.ResetLine()
			if began {
				rec.add(lines)
			} else {
				// Without the start marker (tmux paused the pane's output
				// stream) nothing tells the command's output from the typed
				// wrapper: report the status, and the output as missing.
				rec.mu.Lock()
				rec.noStart = true
				rec.mu.Unlock()
			}
			if err == nil {
				rec.finish(&code, nil)
			} else {
				rec.finish(nil, fmt.Errorf("unreadable exit status marker"))
			}
		}
	}
	return func(data []byte) {
		lines := dec.Write(data)
		if began {
			rec.add(lines)
		}
	}
}

// hostLost reports an error of a remote call that says the host did not
// answer (or its connection dropped during the call), not that the pane
// or its server is gone: trying again tells.
func hostLost(err error) bool {
	return errors.Is(err, tmux.ErrHostUnreachable) || errors.Is(err, remote.ErrBusy) || errors.Is(err, tmux.ErrControlLost)
}

// refollowEvery bounds the wait between two tries to reach a lost host.
var refollowEvery = 5 * time.Second

// goOffline records that the run's host stopped answering.
func (r *runRecord) goOffline(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offline = err
	if r.lostHost == nil {
		r.lostHost = make(chan struct{})
	}
	if !isClosed(r.lostHost) {
		close(r.lostHost)
	}
}

// lostLocked returns the channel closed when the run's host stops
// answering; r.mu is held.
func (r *runRecord) lostLocked() <-chan struct{} {
	if r.lostHost == nil {
		r.lostHost = make(chan struct{})
	}
	return r.lostHost
}

// refollow tries, with a growing pause, to follow the run's pane again on
// its host, until it does, the run ends (it is collected, abandoned or
// dropped), or the pane or its server turns out to be gone (that error is
// returned). Output printed while nobody followed is missed (the stream's
// lost flag). The end marker may have gone by then too: a shell back in
// the foreground of its terminal (the kernel says, on the host) means the
// command ended unseen, with an exit status nobody can know.
func (r *runRecord) refollow(ctx context.Context, feed func([]byte)) error {
	pause := 250 * time.Millisecond
	for {
		select {
		case <-r.done:
			return nil // the pump's loop sees done and closes the stream
		case <-time.After(pause):
		}
		pause = min(2*pause, refollowEvery)
		err := r.ps.follow(ctx)
		if err == nil {
			break
		}
		if !hostLost(err) {
			return err
		}
		r.goOffline(err)
	}
	r.mu.Lock()
	r.offline, r.lostHost = nil, make(chan struct{})
	r.mu.Unlock()
	if !r.shellIdle(ctx) {
		return nil
	}
	// The shell is back at its prompt: an end marker printed after the
	// new subscription is in its stream; give it a moment to arrive.
	for wait := time.After(500 * time.Millisecond); !r.ended(); {
		select {
		case <-r.ps.notify():
			data, err := r.ps.take(ctx)
			feed(data)
			if err != nil {
				return err
			}
			continue
		case <-wait:
		}
		break
	}
	if !r.ended() {
		r.finish(nil, fmt.Errorf("the command in pane %s ended while the connection to host %s was lost: its exit status and the output it printed meanwhile are unknown (capture_pane shows what the pane kept)", r.pane, r.host))
	}
	return nil
}

// shellIdle reports whether the run's pane has its shell back in the
// foreground of its terminal, as its host's kernel says (the foreground
// inspection, over the host's control connection); false when that cannot
// be told.
func (r *runRecord) shellIdle(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	row, err := r.ps.c.resolvePane(ctx, r.sock, PaneTarget{PaneID: &r.ps.where.Pane}, fgPaneFields)
	if err != nil {
		return false
	}
	fg := r.ps.c.inspectForeground(ctx, r.sock, row, nil)
	return fg.State != foreground.Unknown && fg.ShellAtPrompt
}

func (r *runRecord) ended() bool { return isClosed(r.done) }

func (r *runRecord) hasBegun() bool { return isClosed(r.begun) }

// isClosed reports, without waiting, whether ch has been closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *runRecord) add(lines []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exit != nil || r.err != nil {
		return
	}
	r.lines = append(r.lines, lines...)
	if over := len(r.lines) - maxRunLines; over > 0 {
		r.lines = r.lines[over:]
		r.dropped += over
	}
}

func (r *runRecord) finish(exit *int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isClosed(r.done) {
		return
	}
	r.exit, r.err = exit, err
	close(r.done)
}

// stop ends the run's bookkeeping (not the command) if it has not ended.
func (r *runRecord) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !isClosed(r.done) {
		close(r.done)
	}
}

// collect waits up to eff for the run and builds the result. A finished run
// is removed; an unfinished one stays for wait_for_run.
func (c *Call) collect(ctx context.Context, rec *runRecord, eff time.Duration, maxLines *int) (RunCommandResult, error) {
	rec.mu.Lock()
	if rec.waiting {
		rec.mu.Unlock()
		return RunCommandResult{}, expectedf("another call is already waiting for run %s", rec.id)
	}
	rec.waiting = true
	rec.mu.Unlock()
	defer func() { rec.mu.Lock(); rec.waiting = false; rec.mu.Unlock() }()

	wctx, cancel := context.WithTimeout(ctx, eff)
	defer cancel()
	stop := c.progressEvery(wctx, eff, func(el time.Duration) string {
		return fmt.Sprintf("Running in pane %s: %.1fs elapsed; last output: %q", rec.pane, time.Since(rec.started).Seconds(), rec.lastLine())
	})
	// A host lost while this call waits ends the wait: say so now rather
	// than at the timeout. A wait that starts while the host is lost waits
	// for it to come back.
	var lost <-chan struct{}
	rec.mu.Lock()
	if rec.offline == nil {
		lost = rec.lostLocked()
	}
	rec.mu.Unlock()
	select {
	case <-rec.done:
	case <-wctx.Done():
	case <-lost:
	}
	stop()
	if ctx.Err() != nil && !endedEarly(ctx) { // ended early (shutdown, session end): the output so far, as on a timeout
		// The caller went away: the run stays for wait_for_run, and is
		// dropped like any uncollected run (its pane is then free again).
		c.runs().expireLater(rec)
		return RunCommandResult{}, ctx.Err()
	}
	rec.mu.Lock()
	lines := append([]string(nil), rec.lines...)
	dropped := rec.dropped
	missed := rec.ps.lost.Load() // tmux paused the flooding pane's stream: lines are missing
	exit, runErr := rec.exit, rec.err
	noStart, hist, offline := rec.noStart, rec.history, rec.offline
	rec.mu.Unlock()
	finished := exit != nil || runErr != nil
	if finished {
		c.runs().remove(rec)
	} else {
		c.runs().expireLater(rec)
	}
	if runErr != nil {
		return RunCommandResult{}, expectedf("%v", runErr)
	}
	if !finished && offline != nil {
		return RunCommandResult{}, &ToolError{Type: "HostUnreachable", Expected: true, Err: offline,
			Msg: fmt.Sprintf("Lost the connection to host %s while the command ran in pane %s (%s). The pane was not lost: the command may still be running there, or may have ended; its state is unknown. "+
				"Once the host answers, call wait_for_run with run_id %s to collect its result (output printed while the host was unreachable may be missed: lines_missed).",
				rec.host, rec.pane, errarg.Within(offline.Error()), rec.id)}
	}
	res := RunCommandResult{PaneID: rec.pane, ExitStatus: exit, TimedOut: !finished, EffectiveTimeout: eff.Seconds(),
		ElapsedSeconds: float64(time.Since(rec.started).Milliseconds()) / 1000, HistorySuppressed: hist}
	if maxLines != nil && len(lines) > *maxLines {
		dropped += len(lines) - *maxLines
		lines = lines[len(lines)-*maxLines:]
	}
	if lines == nil {
		lines = []string{}
	}
	// A flag that says something is missing carries its count, or says
	// the count is unknown: cut lines are counted, missed ones cannot be.
	res.Output, res.OutputTruncated, res.OutputTruncatedLines = lines, dropped > 0, dropped
	res.LinesMissed = missed || noStart
	if !finished {
		id := rec.id
		res.RunID = &id
	}
	return res, nil
}

func (r *runRecord) lastLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == 0 {
		return ""
	}
	return r.lines[len(r.lines)-1]
}

func (g *runRegistry) remove(rec *runRecord) {
	g.mu.Lock()
	k := runKey{rec.owner, rec.id}
	if g.runs[k] == rec {
		delete(g.runs, k)
	}
	if p := (paneKey{rec.host, rec.sock, rec.pane}); g.busy[p] == rec {
		delete(g.busy, p)
	}
	g.mu.Unlock()
	rec.stop() // ends the pump, which closes the subscription
}

// expireLater drops an uncollected run runKeep after it ends.
func (g *runRegistry) expireLater(rec *runRecord) {
	rec.mu.Lock()
	already := rec.expiring
	rec.expiring = true
	rec.mu.Unlock()
	if already {
		return
	}
	keep, abandon := runKeep, runAbandon // read here: tests change them
	go func() {
		select {
		case <-rec.done:
			time.Sleep(keep)
		case <-time.After(abandon):
			rec.stop()
		}
		g.remove(rec)
	}()
}

func (c *Call) waitForRun(ctx context.Context, a waitForRunArgs) (RunCommandResult, error) {
	if err := positive("max_lines", a.MaxLines); err != nil {
		return RunCommandResult{}, err
	}
	eff, err := c.effectiveTimeout(a.Timeout)
	if err != nil {
		return RunCommandResult{}, err
	}
	// A run_id is found only for the client that started the run: to any
	// other it does not exist.
	rec := c.runs().get(OwnerFrom(ctx), a.RunID)
	if rec == nil {
		return RunCommandResult{}, expectedf("unknown run_id: it was already collected, expired (10 minutes after the command ended), or belongs to another server process")
	}
	if c.host != rec.host && a.Host != nil {
		return RunCommandResult{}, expectedf("run %s belongs to another host", errarg.Bare(a.RunID))
	}
	if (a.SocketName != nil && *a.SocketName != "") || (a.SocketPath != nil && *a.SocketPath != "") {
		if c.host != rec.host || c.Socket(a.SocketArgs) != rec.sock {
			return RunCommandResult{}, expectedf("run %s belongs to another tmux server", errarg.Bare(a.RunID))
		}
	}
	return c.collect(ctx, rec, eff, a.MaxLines)
}

// openStreamAt is openStream for a pane whose location is already known.
func (c *Call) openStreamAt(ctx context.Context, sock tmux.Socket, where tmux.PaneWhere, entry ...tmux.Command) (*paneStream, [][]byte, error) {
	w, err := c.watch.Get(sock, where.Session)
	if err != nil {
		return nil, nil, err
	}
	sub, outs, err := w.SubscribeAndRun(ctx, where.Pane, where.Window, entry...)
	if err != nil {
		return nil, nil, notFoundAs(err, "pane", where.Pane)
	}
	return &paneStream{c: c, sock: sock, where: where, sub: sub}, outs, nil
}

// release drops every run_id of owner: nobody can collect them any more.
// A finished run goes at once; a command still running keeps its pane busy
// (another run_command there would type into it) and is dropped when it
// ends, or abandoned, like any uncollected run.
func (g *runRegistry) release(owner Owner) {
	g.mu.Lock()
	var recs []*runRecord
	for k, rec := range g.runs {
		if k.owner == owner {
			delete(g.runs, k)
			recs = append(recs, rec)
		}
	}
	g.mu.Unlock()
	for _, rec := range recs {
		if rec.ended() {
			g.remove(rec)
		} else {
			g.expireLater(rec)
		}
	}
}
