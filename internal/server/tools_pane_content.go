package server

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneContentTools) }

type capturePaneArgs struct {
	PaneTarget
	Start    *int `json:"start" desc:"First line (tmux -S); 0 = top visible row, negative = scrollback."`
	End      *int `json:"end" desc:"Last line (tmux -E); default: bottom visible row."`
	MaxLines *int `json:"max_lines" default:"500" desc:"Tail lines kept (> 0); null: no cap."`
	StylesArg
	SocketArgs
}

type snapshotPaneArgs struct {
	PaneTarget
	MaxLines *int `json:"max_lines" default:"500" desc:"Tail lines kept (> 0); null: no cap."`
	StylesArg
	SocketArgs
}

// StylesArg asks capture_pane and snapshot_pane for the text's styles
// (styles.go).
type StylesArg struct {
	Styles bool `json:"styles" default:"false" desc:"Also return styled spans 'ROW:COL+WIDTH words' (colour, bold, reverse...)."`
}

type searchPanesArgs struct {
	Pattern                string  `json:"pattern" desc:"Literal unless regex."`
	Regex                  bool    `json:"regex" default:"false" desc:"pattern is a Go RE2 regex."`
	SessionName            *string `json:"session_name" desc:"Only this session."`
	SessionID              *string `json:"session_id"`
	MatchCase              bool    `json:"match_case" default:"false" doc:"Match case exactly; default is case-insensitive."`
	ContentStart           *int    `json:"content_start" desc:"First line (tmux -S; negative = scrollback); default: the visible screen."`
	ContentEnd             *int    `json:"content_end" desc:"Last line (tmux -E)."`
	MaxMatchedLinesPerPane int     `json:"max_matched_lines_per_pane" default:"50" desc:"Keeps the most recent."`
	Limit                  *int    `json:"limit" default:"500" desc:"Panes per page; null: no cap."`
	Offset                 int     `json:"offset" default:"0" desc:"Matching panes to skip."`
	SocketArgs
}

type displayMessageArgs struct {
	FormatString string `json:"format_string" desc:"e.g. '#{pane_id} #{window_zoomed_flag}'"`
	PaneTarget
	SocketArgs
}

func paneContentTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "capture_pane", Title: "Capture Pane", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Read a pane's text: the visible screen, or lines start..end (negative = scrollback), keeping the last max_lines (a cut is announced on the first line). Use snapshot_pane to also get cursor and mode, search_panes to find which pane shows something.",
			Doc:         captureStylesDoc,
		}, func(ctx context.Context, c *Call, a capturePaneArgs) (paneText, error) {
			if err := positive("max_lines", a.MaxLines); err != nil {
				return paneText{}, err
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return paneText{}, err
			}
			cmd := captureCmd(id, false, a.Start, a.End)
			if a.Styles {
				cmd = styledCaptureCmd(id, a.Start, a.End)
			}
			outs, err := c.tmux.Run(ctx, sock, cmd)
			if err != nil {
				return paneText{}, notFoundAs(err, "pane", id)
			}
			kept, dropped, styles, err := paneLines(c.Tool, outs[0], a.Styles, a.MaxLines)
			if err != nil {
				return paneText{}, err
			}
			text := strings.Join(kept, "\n")
			if dropped > 0 {
				text = fmt.Sprintf("[... truncated %d lines ...]\n", dropped) + text
			}
			return paneText{text, styles}, nil // the 1 MB cap (limits.go) keeps the tail of a plain one
		}),
		define(Tool{
			Name: "snapshot_pane", Title: "Snapshot Pane", Toolset: "pane", Tier: config.Readonly, Preset: RO, AlwaysLoad: true,
			Description: "One-call view of a pane: visible text plus cursor, size, copy-mode and scroll state, alternate screen, title, command and path. Prefer it over capture_pane + get_pane_info when cursor or mode matters.",
			Doc:         snapshotStylesDoc,
		}, func(ctx context.Context, c *Call, a snapshotPaneArgs) (PaneSnapshot, error) {
			if err := positive("max_lines", a.MaxLines); err != nil {
				return PaneSnapshot{}, err
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return PaneSnapshot{}, err
			}
			capture := captureCmd(id, false, nil, nil)
			if a.Styles {
				capture = styledCaptureCmd(id, nil, nil)
			}
			// capture-pane first: it fails on a missing pane, where
			// display-message would answer with empty fields.
			outs, err := c.tmux.Run(ctx, sock,
				capture,
				tmux.Command{"display-message", "-p", "-t", id, tmux.Format(snapshotFields...)})
			if err != nil {
				return PaneSnapshot{}, notFoundAs(err, "pane", id)
			}
			rows, err := tmux.ParseRows(outs[1], snapshotFields)
			if err != nil {
				return PaneSnapshot{}, err
			}
			if len(rows) == 0 || rows[0]["pane_id"] != id {
				return PaneSnapshot{}, &tmux.NotFoundError{What: "pane", Detail: id}
			}
			kept, dropped, styles, err := paneLines(c.Tool, outs[0], a.Styles, a.MaxLines)
			if err != nil {
				return PaneSnapshot{}, err
			}
			snap := c.paneSnapshot(rows[0], strings.Join(kept, "\n"), dropped)
			snap.Styles = styles
			snap.Foreground = foregroundModel(c.inspectForeground(ctx, sock, rows[0], nil))
			return snap, nil
		}),
		define(Tool{
			Name: "search_panes", Title: "Search Panes", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Find which panes show some text: searches each pane's visible screen (or content_start..content_end) and returns matching panes and lines. Literal, case-insensitive unless regex/match_case. Paginated by pane. To read one pane use capture_pane.",
		}, func(ctx context.Context, c *Call, a searchPanesArgs) (SearchPanesResult, error) {
			return c.searchPanes(ctx, a)
		}),
		define(Tool{
			Name: "display_message", Title: "Evaluate tmux Format String", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "Evaluate a tmux format string against a pane, e.g. '#{pane_id} #{window_zoomed_flag}', for fields get_pane_info does not report. Jobs '#(...)' and modifiers E and T are refused.",
		}, func(ctx context.Context, c *Call, a displayMessageArgs) (Text, error) {
			if err := checkFormat(a.FormatString); err != nil {
				return "", err
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return "", err
			}
			// display-message does not fail on a missing pane, so the
			// target is checked by a list-panes that does, in the same
			// round trip.
			outs, err := c.tmux.Run(ctx, sock,
				tmux.Command{"list-panes", "-t", id, "-F", ""},
				tmux.Command{"display-message", "-p", "-t", id, "--", a.FormatString})
			if err != nil {
				return "", notFoundAs(err, "pane", id)
			}
			return Text(strings.TrimRight(string(outs[1]), "\n")), nil
		}),
	}
}

func captureCmd(id string, join bool, start, end *int) tmux.Command {
	cmd := tmux.Command{"capture-pane", "-p"}
	if join {
		cmd = append(cmd, "-J")
	}
	cmd = append(cmd, "-t", id)
	if start != nil {
		cmd = append(cmd, "-S", strconv.Itoa(*start))
	}
	if end != nil {
		cmd = append(cmd, "-E", strconv.Itoa(*end))
	}
	return cmd
}

// captureLines splits capture-pane output into rows and drops the blank
// rows at the bottom (an idle pane's empty screen below the prompt).
func captureLines(out []byte) []string {
	lines := splitRows(out)
	n := len(lines)
	for n > 0 && strings.TrimRight(lines[n-1], " ") == "" {
		n--
	}
	return lines[:n]
}

// splitRows cuts tmux output into its lines (the last "\n" ends the last
// line, it does not start an empty one).
func splitRows(out []byte) []string {
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// tailLines keeps the last max lines (all when max is nil) and reports how
// many were dropped from the head.
func tailLines(lines []string, max *int) ([]string, int) {
	if max == nil || len(lines) <= *max {
		return lines, 0
	}
	return lines[len(lines)-*max:], len(lines) - *max
}

func positive(name string, n *int) error {
	if n != nil && *n <= 0 {
		return expectedf("%s must be a positive integer (or null for no limit)", name)
	}
	return nil
}

// reexpand finds a format modifier that expands a value a second time: E
// (expand) or T (expand with strftime) at the start of a modifier, that is
// right after "{" or a ";" separator and followed by ":" or ";". Matching
// any "{" or ";" (not only real modifier positions) errs on the side of
// refusing.
var reexpand = lazyRegexp(`[{;][ET][:;]`)

// checkFormat refuses the format syntax that can run or re-evaluate text:
// jobs #(...) run a shell command, and E/T re-expand a value, which can come
// from a program in the pane (a title, a path), as a format with its own
// jobs.
func checkFormat(f string) error {
	if strings.Contains(f, "#(") {
		return expectedf("format_string must not contain '#(': tmux format jobs run shell commands.")
	}
	if reexpand().MatchString(f) {
		return expectedf("format_string must not use the E or T modifiers (e.g. '#{E:...}'): they expand a value a second time, and values such as pane titles come from programs in the pane.")
	}
	return nil
}

// maxChainArgv bounds the argv of one chained capture round trip; tmux
// refuses a command line over 16 KiB.
const maxChainArgv = 12 << 10

// chainOverhead approximates what the runner adds per chained command (the
// ";" separators and the marker display-message).
const chainOverhead = 64

func (c *Call) searchPanes(ctx context.Context, a searchPanesArgs) (SearchPanesResult, error) {
	if a.MaxMatchedLinesPerPane <= 0 {
		return SearchPanesResult{}, expectedf("max_matched_lines_per_pane must be a positive integer")
	}
	if err := positive("limit", a.Limit); err != nil {
		return SearchPanesResult{}, err
	}
	if a.Offset < 0 {
		return SearchPanesResult{}, expectedf("offset must not be negative")
	}
	expr := a.Pattern
	if !a.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !a.MatchCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return SearchPanesResult{}, expectedf("Invalid regex pattern: %v", regexErr(err))
	}

	sock := c.Socket(a.SocketArgs)
	scope := tmux.PaneScope{SessionID: str(a.SessionID), SessionName: str(a.SessionName)}
	args, err := scope.Target()
	if err != nil {
		return SearchPanesResult{}, err
	}
	// The listing asks for pane ids only: the fields of a match are read
	// for the panes on the page, after the captures (matchRows).
	rows, err := c.tmux.Rows(ctx, sock, append(tmux.Command{"list-panes"}, args...), []string{"pane_id"})
	if err != nil {
		return SearchPanesResult{}, notFoundAs(err, scopeKind(scope), scopeName(scope))
	}
	rows = tmux.DedupeBy(c.scopeRows(rows, "pane_id"), "pane_id")
	sort.SliceStable(rows, func(i, j int) bool {
		return tmux.PaneID(rows[i]["pane_id"]).Num() < tmux.PaneID(rows[j]["pane_id"]).Num()
	})

	captures, err := c.captureAll(ctx, sock, rows, a.ContentStart, a.ContentEnd, maxChainArgv)
	if err != nil {
		return SearchPanesResult{}, err
	}

	type hit struct {
		id      string
		matched []string
		cut     bool
	}
	var hits []hit
	for _, r := range rows {
		out, ok := captures[r["pane_id"]]
		if !ok {
			continue // the pane went away between the listing and the capture
		}
		if !a.Regex && !re.Match(out) {
			// A literal pattern found in no line is not in the text: one
			// scan of the whole capture instead of one per line.
			continue
		}
		var matched []string
		for _, line := range captureLines(out) {
			line = strings.TrimRight(line, " ")
			if re.MatchString(line) {
				matched = append(matched, line)
			}
		}
		if len(matched) == 0 {
			continue
		}
		cut := len(matched) > a.MaxMatchedLinesPerPane
		if cut {
			matched = matched[len(matched)-a.MaxMatchedLinesPerPane:]
		}
		hits = append(hits, hit{r["pane_id"], matched, cut})
	}

	start := min(a.Offset, len(hits))
	end := len(hits)
	if a.Limit != nil && start+*a.Limit < end {
		end = start + *a.Limit
	}
	page := make([]string, 0, end-start)
	for _, h := range hits[start:end] {
		page = append(page, h.id)
	}
	fields, err := c.matchRows(ctx, sock, args, page)
	if err != nil {
		return SearchPanesResult{}, notFoundAs(err, scopeKind(scope), scopeName(scope))
	}
	res := SearchPanesResult{Matches: []PaneContentMatch{}, TruncatedPanes: []string{}, TotalPanesMatched: len(hits), Offset: a.Offset, Limit: a.Limit}
	for _, h := range hits[start:end] {
		r, ok := fields[h.id]
		if !ok {
			continue // the pane went away after its capture
		}
		res.Matches = append(res.Matches, c.paneContentMatch(r, h.matched))
		res.Truncated = res.Truncated || h.cut
	}
	for _, h := range hits[end:] {
		res.TruncatedPanes = append(res.TruncatedPanes, h.id)
	}
	res.Truncated = res.Truncated || len(res.TruncatedPanes) > 0
	return res, nil
}

// maxFilteredIDs is the most pane ids matchRows picks with a tmux-side
// filter; for more, listing every pane's fields is cheaper than matching
// every pane against a long alternation.
const maxFilteredIDs = 64

// matchRows reads the fields of a match (searchFields) for the given panes
// of the scope (list-panes args), keyed by pane id, in one round trip. The
// listing is the scope's own, filtered by tmux to those ids, so a pane in
// grouped sessions is reported in the session that lists it first, as a
// listing of every pane would. A pane that is gone has no row.
func (c *Call) matchRows(ctx context.Context, sock tmux.Socket, scope []string, ids []string) (map[string]tmux.Row, error) {
	out := make(map[string]tmux.Row, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cmd := append(tmux.Command{"list-panes"}, scope...)
	if len(ids) <= maxFilteredIDs {
		alt := make([]string, len(ids))
		for i, id := range ids {
			pid, err := tmux.ParsePaneID(id) // digits after '%': nothing tmux's format or regex parser reads
			if err != nil {
				return nil, err
			}
			alt[i] = string(pid)
		}
		cmd = append(cmd, "-f", "#{m/r:^("+strings.Join(alt, "|")+")$,#{pane_id}}")
	}
	rows, err := c.tmux.Rows(ctx, sock, cmd, searchFields)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, r := range tmux.DedupeBy(rows, "pane_id") {
		if want[r["pane_id"]] {
			out[r["pane_id"]] = r
		}
	}
	return out, nil
}

// captureAll captures every listed pane (wrapped lines joined) in as few
// round trips as maxArgv allows: normally one, and for a big server one per
// argv-sized chunk of panes, the chunks in flight at once (up to
// maxCaptureChunks), so the tmux processes a large search needs overlap
// their start-up instead of queueing. A pane that vanished since the
// listing is skipped rather than failing the search.
func (c *Call) captureAll(ctx context.Context, sock tmux.Socket, rows []tmux.Row, start, end *int, maxArgv int) (map[string][]byte, error) {
	out := make(map[string][]byte, len(rows))
	var chunks [][]string
	size := maxArgv + 1
	for _, r := range rows {
		n := chainOverhead
		for _, a := range captureCmd(r["pane_id"], true, start, end) {
			n += len(a) + 1
		}
		if size+n > maxArgv && size > 0 {
			chunks = append(chunks, nil)
			size = 0
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], r["pane_id"])
		size += n
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		slots    = make(chan struct{}, maxCaptureChunks)
	)
	for _, ids := range chunks {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			got, err := c.captureChunk(ctx, sock, ids, start, end)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			for id, o := range got {
				out[id] = o
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// maxCaptureChunks bounds the capture round trips one search has in flight.
const maxCaptureChunks = 4

// captureChunk captures panes that fit one round trip; after a pane that is
// gone, the rest of the chunk is captured again without it.
func (c *Call) captureChunk(ctx context.Context, sock tmux.Socket, ids []string, start, end *int) (map[string][]byte, error) {
	out := make(map[string][]byte, len(ids))
	for len(ids) > 0 {
		cmds := make([]tmux.Command, len(ids))
		for k, id := range ids {
			cmds[k] = captureCmd(id, true, start, end)
		}
		outs, err := c.tmux.Run(ctx, sock, cmds...)
		for k, o := range outs {
			out[ids[k]] = o
		}
		if err == nil {
			return out, nil
		}
		if !tmuxNotFound(err) {
			return nil, err
		}
		// outs holds the captures before the failing one; skip it.
		ids = ids[min(len(outs)+1, len(ids)):]
	}
	return out, nil
}
