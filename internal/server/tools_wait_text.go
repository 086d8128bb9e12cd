package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/termtext"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, waitTextTools) }

type waitForTextArgs struct {
	Patterns *[]string `json:"patterns" desc:"Any one ends the wait; omitted: any new output."`
	Stop     *[]string `json:"stop" desc:"End the wait as 'stopped' (checked first)."`
	Regex    bool      `json:"regex" default:"false" desc:"patterns and stop are Go regexes."`
	PaneTarget
	Timeout   float64 `json:"timeout" default:"8.0" desc:"Seconds (> 0), capped by the wait ceiling."`
	Interval  float64 `json:"interval" default:"0.05" desc:"Ignored (>= 0.01): the wait is event-driven."`
	MatchCase bool    `json:"match_case" default:"false" doc:"Match case-sensitively."`
	SocketArgs
}

// WaitForTextResult is the reference's wait_for_text answer.
type WaitForTextResult struct {
	Found            bool     `json:"found" desc:"A pattern matched, or (patterns null) new output appeared."`
	Outcome          string   `json:"outcome" enum:"matched,any_output,stopped,alternate_screen,timeout" desc:"How the wait ended."`
	MatchedIndex     *int     `json:"matched_index" desc:"Index into patterns (or into stop when stopped)."`
	MatchedLines     []string `json:"matched_lines" desc:"Lines that matched (at most 20 lines / 2000 bytes)."`
	Tail             []string `json:"tail" desc:"Rows from the entry cursor row down as the pane shows them when the wait returns: wrapped rows joined, trailing spaces kept (at most 20 lines / 2000 bytes)."`
	SawNewOutput     bool     `json:"saw_new_output" desc:"The pane printed something during the wait."`
	MatchedAtEntry   bool     `json:"matched_at_entry" desc:"A pattern was already on the screen at entry and nothing new matched."`
	AlternateScreen  bool     `json:"alternate_screen" desc:"The pane was on the alternate screen (a full-screen program) at some point."`
	LinesMissed      bool     `json:"lines_missed" desc:"Output may have been missed (tmux paused a flooding pane). Addition of tmux-mcp."`
	PaneID           string   `json:"pane_id" desc:"Pane waited on."`
	ElapsedSeconds   float64  `json:"elapsed_seconds" desc:"Seconds waited."`
	EffectiveTimeout float64  `json:"effective_timeout" desc:"The timeout actually enforced, after the ceiling."`
}

func waitTextTools() []*Tool {
	return []*Tool{define(Tool{
		Name: "wait_for_text", Title: "Wait For Text", Toolset: "wait", Tier: config.Readonly, Preset: RO, SelfBounded: true,
		Description: "Wait until text appears in a pane's output written after the call starts (another process, a human, a server starting). Event-driven. For a command you run yourself use run_command; to wait on a script, wait_for_channel.",
	}, func(ctx context.Context, c *Call, a waitForTextArgs) (WaitForTextResult, error) {
		return c.waitForText(ctx, a)
	})}
}

const (
	capLines = 20
	capBytes = 2000
)

func compilePatterns(name string, list *[]string, regex, matchCase bool) ([]*regexp.Regexp, error) {
	if list == nil {
		return nil, nil
	}
	if len(*list) == 0 {
		return nil, expectedf("%s must not be empty (use null to wait for any output)", name)
	}
	var out []*regexp.Regexp
	for i, p := range *list {
		if p == "" {
			return nil, expectedf("%s[%d] is empty", name, i)
		}
		src := p
		if !regex {
			src = regexp.QuoteMeta(p)
		}
		if !matchCase {
			src = "(?i)" + src
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, expectedf("%s[%d] is not a valid regular expression: %v", name, i, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// firstMatch returns the index of the first pattern that matches any line,
// and the matching lines.
func firstMatch(res []*regexp.Regexp, lines []string) (int, []string) {
	for i, re := range res {
		var hits []string
		for _, l := range lines {
			if re.MatchString(l) {
				hits = append(hits, l)
			}
		}
		if len(hits) > 0 {
			return i, hits
		}
	}
	return -1, nil
}

// capTail keeps the tail as the reference's _limit_lines does: the last
// capLines lines, then lines dropped from the head while the lines joined
// by "\n" exceed capBytes; a single line still over keeps its last
// capBytes bytes (from a character boundary).
func capTail(lines []string) []string {
	if len(lines) > capLines {
		lines = lines[len(lines)-capLines:]
	}
	size := len(lines) - 1 // the separators
	for _, l := range lines {
		size += len(l)
	}
	for len(lines) > 1 && size > capBytes {
		size -= len(lines[0]) + 1
		lines = lines[1:]
	}
	if len(lines) == 1 && len(lines[0]) > capBytes {
		l := lines[0]
		cut := len(l) - capBytes
		for cut < len(l) && !utf8.RuneStart(l[cut]) {
			cut++
		}
		lines = []string{l[cut:]}
	}
	return append([]string{}, lines...)
}

var waitStateFields = []string{"history_size", "cursor_y", "pane_width", "pane_pid", "pane_dead", "alternate_on"}

var (
	altOn  = [][]byte{[]byte("\x1b[?1049h"), []byte("\x1b[?1047h"), []byte("\x1b[?47h")}
	altOff = [][]byte{[]byte("\x1b[?1049l"), []byte("\x1b[?1047l"), []byte("\x1b[?47l")}
)

// altSwitch reports the last alternate-screen switch in data, if any.
func altSwitch(data []byte) (on, found bool) {
	last := -1
	for _, s := range altOn {
		if i := bytes.LastIndex(data, s); i > last {
			last, on = i, true
		}
	}
	for _, s := range altOff {
		if i := bytes.LastIndex(data, s); i > last {
			last, on = i, false
		}
	}
	return on, last >= 0
}

// textWait is the state of one wait_for_text call.
type textWait struct {
	ps       *paneStream
	pane     string
	patterns []*regexp.Regexp
	stop     []*regexp.Regexp

	dec      termtext.Decoder
	anchor   int // absolute grid row of the cursor at entry
	prevHS   int
	width    int
	pid      string
	entrySet map[string]bool
	rendered bool // anchor still valid for rendered checks
	alt      bool
	altSeen  bool
	tail     []string
	newlines int // stream newlines since the last rendered check
	bytes    int
	last     atomic.Pointer[string] // newest output line; the progress goroutine reads it
}

// waitSetupFloor is how long wait_for_text's set-up (the pane, the
// watcher, the entry screen) may take whatever the wait's own timeout.
const waitSetupFloor = 5 * time.Second

func (c *Call) waitForText(ctx context.Context, a waitForTextArgs) (WaitForTextResult, error) {
	start := time.Now()
	if a.Interval < 0.01 {
		return WaitForTextResult{}, expectedf("interval must be at least 0.01")
	}
	eff, err := c.effectiveTimeout(a.Timeout)
	if err != nil {
		return WaitForTextResult{}, err
	}
	patterns, err := compilePatterns("patterns", a.Patterns, a.Regex, a.MatchCase)
	if err != nil {
		return WaitForTextResult{}, err
	}
	stop, err := compilePatterns("stop", a.Stop, a.Regex, a.MatchCase)
	if err != nil {
		return WaitForTextResult{}, err
	}
	deadline := start.Add(eff)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// Finding the pane and attaching the watcher is not waiting: on a
	// loaded machine or over ssh it can take longer than a short timeout,
	// which then answers "timeout" with what the pane shows (as the
	// reference, which always reads the pane once) instead of failing.
	sctx, scancel := context.WithDeadline(ctx, start.Add(max(eff, waitSetupFloor)))
	defer scancel()
	sock := c.Socket(a.SocketArgs)
	// The target and where it lives in one round trip, then the watcher.
	where, err := c.resolvePane(sctx, sock, a.PaneTarget, tmux.WhereFields)
	if err != nil {
		return WaitForTextResult{}, err
	}
	pane := where["pane_id"]
	ps, outs, err := c.openStreamAt(sctx, sock, tmux.WhereOf(where),
		tmux.Command{"display-message", "-p", "-t", pane, tmux.Format(waitStateFields...)},
		tmux.Command{"capture-pane", "-p", "-t", pane})
	if err != nil {
		return WaitForTextResult{}, err
	}
	defer ps.close()
	st, err := oneRow(outs[0], waitStateFields, "pane")
	if err != nil {
		return WaitForTextResult{}, err
	}
	if st["pane_dead"] == "1" {
		// Nothing will ever print there: say so instead of waiting it out.
		return WaitForTextResult{}, deadPane(pane)
	}
	w := &textWait{ps: ps, pane: pane, patterns: patterns, stop: stop, rendered: true, entrySet: map[string]bool{}}
	w.prevHS, w.width, w.pid = atoi(st["history_size"]), max(atoi(st["pane_width"]), 1), st["pane_pid"]
	w.anchor = w.prevHS + atoi(st["cursor_y"])
	w.alt = st["alternate_on"] == "1"
	w.altSeen = w.alt
	visible := splitRows(outs[1])
	for _, r := range visible[min(atoi(st["cursor_y"]), len(visible)):] {
		w.entrySet[strings.TrimRight(r, " ")] = true
	}
	w.tail = trimBlankTail(visible[min(atoi(st["cursor_y"]), len(visible)):])
	res := WaitForTextResult{PaneID: pane, EffectiveTimeout: eff.Seconds()}
	if i, _ := firstMatch(patterns, visible); i >= 0 {
		res.MatchedAtEntry = true
	}
	stopProgress := c.progressEvery(wctx, eff, func(el time.Duration) string {
		return fmt.Sprintf("Waiting on pane %s: %.1fs elapsed, %.1fs left; last output: %q", pane, el.Seconds(), (eff - el).Seconds(), w.lastLine())
	})
	defer stopProgress()

	outcome, idx, lines, err := w.loop(wctx, &res)
	if err != nil && wctx.Err() == nil {
		return WaitForTextResult{}, err
	}
	// A call the client cancelled gets no result; one the server ended
	// early (shutdown, the session's end) answers like a timeout, with what
	// it saw so far.
	tailCtx, tailBudget := ctx, time.Second
	if ctx.Err() != nil {
		if !endedEarly(ctx) {
			return WaitForTextResult{}, ctx.Err()
		}
		tailCtx, tailBudget = context.WithoutCancel(ctx), 300*time.Millisecond
	}
	if outcome == "" {
		outcome = "timeout"
		if w.altSeen {
			outcome = "alternate_screen"
		}
	}
	// The tail is what the pane shows at the moment the wait returns, for
	// every outcome; if it cannot be read, the last rows read stand in.
	tctx, tcancel := context.WithTimeout(tailCtx, tailBudget)
	w.readTail(tctx)
	tcancel()
	res.Outcome = outcome
	res.Found = outcome == "matched" || outcome == "any_output"
	if idx >= 0 {
		res.MatchedIndex = &idx
	}
	if res.Found || outcome == "stopped" {
		res.MatchedAtEntry = false
	}
	res.MatchedLines = capTail(lines)
	res.Tail = capTail(w.tail)
	res.AlternateScreen = w.altSeen
	res.LinesMissed = ps.lost.Load()
	res.ElapsedSeconds = float64(time.Since(start).Milliseconds()) / 1000
	return res, nil
}

func (w *textWait) lastLine() string {
	if p := w.last.Load(); p != nil {
		return *p
	}
	return ""
}

// loop waits for output events; each one is matched against the decoded
// stream first (no tmux call), then against the rendered rows.
func (w *textWait) loop(ctx context.Context, res *WaitForTextResult) (string, int, []string, error) {
	ps := w.ps
	var renderTimer <-chan time.Time
	var lastRender time.Time
	for {
		select {
		case <-ctx.Done():
			return "", -1, nil, ctx.Err()
		case <-renderTimer:
			renderTimer = nil
			lastRender = time.Now()
			if o, i, l, err := w.matchRendered(ctx, res); err != nil || o != "" {
				return o, i, l, err
			}
			continue
		case <-ps.notify():
		}
		data, err := ps.take(ctx)
		if err != nil {
			return "", -1, nil, err
		}
		if len(data) == 0 {
			// A layout change (a pane died or resized): check the pane now.
			if o, i, l, err := w.matchRendered(ctx, res); err != nil || o != "" {
				return o, i, l, err
			}
			continue
		}
		res.SawNewOutput = true
		if on, ok := altSwitch(data); ok {
			w.alt = on
			w.altSeen = w.altSeen || on
		}
		w.newlines += bytes.Count(data, []byte("\n"))
		w.bytes += len(data)
		lines := w.dec.Write(data)
		if p := w.dec.Partial(); p != "" {
			lines = append(lines, p)
		}
		if len(lines) > 0 {
			w.last.Store(&lines[len(lines)-1])
		}
		if !w.alt {
			if i, hits := firstMatch(w.stop, lines); i >= 0 {
				return "stopped", i, hits, nil
			}
			if i, hits := firstMatch(w.patterns, lines); i >= 0 {
				return "matched", i, hits, nil
			}
			if w.patterns == nil {
				var nonEmpty []string
				for _, l := range lines {
					if strings.TrimSpace(l) != "" {
						nonEmpty = append(nonEmpty, l)
					}
				}
				if len(nonEmpty) > 0 {
					return "any_output", -1, nonEmpty, nil
				}
			}
		}
		// The stream did not match: check the rendered rows too (text drawn
		// by cursor movement), at most every 20 ms per wait.
		if renderTimer == nil && w.rendered {
			renderTimer = time.After(max(0, 20*time.Millisecond-time.Since(lastRender)))
		}
	}
}

func (w *textWait) matchRendered(ctx context.Context, res *WaitForTextResult) (string, int, []string, error) {
	rows, err := w.renderedCheck(ctx)
	if err != nil || w.alt {
		return "", -1, nil, err
	}
	var fresh []string
	for _, r := range rows {
		if r = strings.TrimRight(r, " "); r != "" && !w.entrySet[r] {
			fresh = append(fresh, r)
		}
	}
	if len(fresh) > 0 {
		res.SawNewOutput = true
	}
	if i, hits := firstMatch(w.stop, fresh); i >= 0 {
		return "stopped", i, hits, nil
	}
	if i, hits := firstMatch(w.patterns, fresh); i >= 0 {
		return "matched", i, hits, nil
	}
	return "", -1, nil, nil
}

// tailFields is the state a tail read checks its capture against.
var tailFields = []string{"pane_id", "history_size", "pane_height"}

// readTail reads the rows from the entry cursor row down as the
// reference's last poll does: capture-pane -J from the anchor, so wrapped
// rows are joined and trailing spaces kept, empty rows at the bottom
// dropped, and no rows when the anchor is below the screen. The capture
// start depends on the history size, read in the same round trip (tmux
// runs it without output in between); if the pane scrolled since, the read
// is repeated with the new size.
func (w *textWait) readTail(ctx context.Context) {
	if !w.rendered {
		return // the anchor is gone (history trimmed) or replies cannot be trusted
	}
	hs := w.prevHS
	for range 4 {
		rel := w.anchor - hs
		outs, err := w.ps.sub.Watcher().Command(ctx,
			tmux.Command{"list-panes", "-t", w.pane, "-F", tmux.Format(tailFields...)},
			tmux.Command{"capture-pane", "-p", "-J", "-t", w.pane, "-S", strconv.Itoa(rel)})
		if err != nil {
			return
		}
		st, err := rowFor(outs[0], tailFields, w.pane)
		if err != nil {
			return
		}
		now := atoi(st["history_size"])
		if now < w.prevHS || rel < -now {
			return // history was trimmed or cleared: the anchor row is gone
		}
		if now != hs {
			hs = now
			continue
		}
		if rel >= atoi(st["pane_height"]) {
			w.tail = []string{} // tmux would clip the start to the bottom row
			return
		}
		rows := strings.Split(string(outs[1]), "\n")
		for len(rows) > 0 && rows[len(rows)-1] == "" {
			rows = rows[:len(rows)-1]
		}
		w.tail = rows
		return
	}
}

// renderedCheck reads the pane's state and its rows from the entry anchor
// down in one round trip. The capture starts far enough up to reach the
// anchor: since the last check the pane can have scrolled at most one row
// per newline plus one per screen width of bytes.
func (w *textWait) renderedCheck(ctx context.Context) ([]string, error) {
	bound := w.newlines + w.bytes/w.width + 2
	startRel := w.anchor - w.prevHS - bound
	// Over the watcher's own connection: no process, and the capture is
	// checked by a nonce so pane text cannot shift replies.
	outs, err := w.ps.sub.Watcher().Command(ctx,
		tmux.Command{"list-panes", "-t", w.pane, "-F", tmux.Format(append([]string{"pane_id"}, waitStateFields...)...)},
		tmux.Command{"capture-pane", "-p", "-t", w.pane, "-S", strconv.Itoa(startRel)})
	if errors.Is(err, tmux.ErrOutOfStep) {
		w.rendered = false // the stream still sees everything
		return nil, nil
	}
	if err != nil {
		return nil, notFoundAs(err, "pane", w.pane)
	}
	st, err := rowFor(outs[0], append([]string{"pane_id"}, waitStateFields...), w.pane)
	if err != nil {
		return nil, err
	}
	if st["pane_dead"] == "1" {
		return nil, expectedf("pane %s died during the wait (its program exited)", w.pane)
	}
	if st["pane_pid"] != w.pid {
		return nil, expectedf("pane %s was respawned during the wait", w.pane)
	}
	w.alt = st["alternate_on"] == "1"
	w.altSeen = w.altSeen || w.alt
	hs := atoi(st["history_size"])
	if hs < w.prevHS {
		w.rendered = false // history trimmed or cleared: the anchor is gone; the stream still sees everything
	}
	w.prevHS, w.newlines, w.bytes = hs, 0, 0
	if !w.rendered {
		return nil, nil
	}
	rows := splitRows(outs[1])
	first := max(startRel, -hs)
	idx := (w.anchor - hs) - first
	if idx < 0 || idx > len(rows) {
		return nil, nil
	}
	w.tail = trimBlankTail(rows[idx:])
	return rows[idx:], nil
}
