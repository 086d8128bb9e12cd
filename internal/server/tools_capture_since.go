package server

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, captureSinceTools) }

type captureSinceArgs struct {
	Cursor *string `json:"cursor" desc:"From the previous call; omit on the first."`
	PaneTarget
	MaxLines *int `json:"max_lines" default:"500" desc:"Tail lines kept (> 0); null: no cap."`
	MaxBytes *int `json:"max_bytes" default:"128000" desc:"Tail bytes kept (> 0); null: no cap."`
	SocketArgs
}

// CaptureSinceResult is the reference's capture_since answer.
type CaptureSinceResult struct {
	PaneID         string   `json:"pane_id" desc:"Pane ID"`
	Cursor         string   `json:"cursor" desc:"Pass this to the next call to get only what is new after now."`
	Lines          []string `json:"lines" desc:"Rows written or rewritten since the cursor (the visible screen on the first call)."`
	ElapsedSeconds float64  `json:"elapsed_seconds" desc:"Seconds since the cursor was issued (0 on the first call)."`
	LinesMissed    bool     `json:"lines_missed" desc:"True when the new rows could not be located exactly (history cleared or trimmed past the cursor, rows too alike to tell apart, or a cursor this server no longer holds); lines is then the visible screen."`
	Truncated      bool     `json:"truncated" desc:"True when max_lines or max_bytes cut lines from the head."`
	TruncatedLines int      `json:"truncated_lines" desc:"Lines dropped by max_lines."`
	TruncatedBytes int      `json:"truncated_bytes" desc:"Bytes dropped by max_bytes."`
}

func captureSinceTools() []*Tool {
	return []*Tool{define(Tool{
		Name: "capture_since", Title: "Capture Since", Toolset: "pane", Tier: config.Readonly, Preset: RO,
		Description: "Read only what a pane printed since your last look: the first call returns the screen and a cursor, each later call the rows written since and a new cursor. Follows a long-running program across turns without re-reading it with capture_pane.",
	}, func(ctx context.Context, c *Call, a captureSinceArgs) (CaptureSinceResult, error) {
		return c.captureSince(ctx, a)
	})}
}

var sinceFields = []string{"pane_id", "pane_pid", "pane_dead", "history_size", "history_limit", "cursor_x", "cursor_y", "pane_height",
	"pane_width", "alternate_on", "window_activity", "pid", "start_time", "socket_path"}

// noLimit stands for a null max_lines or max_bytes.
const noLimit = math.MaxInt

func (c *Call) captureSince(ctx context.Context, a captureSinceArgs) (CaptureSinceResult, error) {
	if err := positive("max_lines", a.MaxLines); err != nil {
		return CaptureSinceResult{}, err
	}
	if err := positive("max_bytes", a.MaxBytes); err != nil {
		return CaptureSinceResult{}, err
	}
	store, owner := c.cursors(), OwnerFrom(ctx)
	var prev *sinceState
	unknown := false
	paneID := ""
	if text := str(a.Cursor); text != "" {
		pane, id, ok := parseCursor(text)
		if !ok {
			return CaptureSinceResult{}, expectedf("cursor is not a capture_since cursor; call capture_since without a cursor to start again")
		}
		// The pane named in the cursor text is the one its state is for;
		// the target arguments can only agree with it.
		if target := str(a.PaneID); target != "" && target != pane {
			return CaptureSinceResult{}, expectedf("the cursor belongs to pane %s, not %s", pane, errarg.Bare(target))
		}
		paneID = pane
		prev = store.get(owner, id)
		if prev == nil {
			// Evicted, issued by another process or to another client:
			// start again on its pane and say that output may be missed.
			unknown = true
		} else if prev.Pane != pane {
			return CaptureSinceResult{}, expectedf("cursor is not a capture_since cursor; call capture_since without a cursor to start again")
		}
	}
	sock := c.Socket(a.SocketArgs)
	if paneID == "" {
		id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
		if err != nil {
			return CaptureSinceResult{}, err
		}
		paneID = id
	}
	// State, tmux's clock and the whole grid in one round trip: tmux runs a
	// command list without reading pane output in between, so they agree.
	outs, err := c.tmux.Run(ctx, sock, sinceCommands(paneID)...)
	if err != nil {
		return CaptureSinceResult{}, notFoundAs(err, "pane", paneID)
	}
	snap, now, st, err := c.sinceRead(store, paneID, outs)
	if err != nil {
		return CaptureSinceResult{}, err
	}
	if st["pane_dead"] == "1" {
		return CaptureSinceResult{}, deadPane(paneID)
	}
	grid := snap.Grid
	if prev != nil {
		if prev.Socket != now.Socket || prev.Server != now.Server {
			return CaptureSinceResult{}, expectedf("the cursor was issued for another tmux server (or before it restarted); call capture_since without a cursor")
		}
		if prev.PanePID != now.PanePID {
			return CaptureSinceResult{}, expectedf("pane %s was respawned since the cursor was issued; call capture_since without a cursor", paneID)
		}
	}
	visible := grid
	if snap.HS <= len(grid) {
		visible = grid[snap.HS:]
	}
	res := CaptureSinceResult{PaneID: paneID, Cursor: store.put(owner, now), LinesMissed: unknown}
	var lines []string
	if prev == nil {
		lines = trimBlankTail(visible)
	} else {
		res.ElapsedSeconds = roundMs(now.Issued.Sub(prev.Issued))
		var missed bool
		lines, missed = alignSince(prev, snap)
		if missed {
			res.LinesMissed = true
			lines = trimBlankTail(visible)
		}
	}
	maxLines, maxBytes := noLimit, noLimit
	if a.MaxLines != nil {
		maxLines = *a.MaxLines
	}
	if a.MaxBytes != nil {
		maxBytes = *a.MaxBytes
	}
	lines, res.TruncatedLines, res.TruncatedBytes = limitLinesBytes(lines, maxLines, maxBytes)
	res.Truncated = res.TruncatedLines > 0 || res.TruncatedBytes > 0
	if lines == nil {
		lines = []string{}
	}
	res.Lines = lines
	return res, nil
}

// sinceCommands are one cursor read: the pane's state, tmux's clock and
// the whole grid, in one command list (tmux reads no pane output between
// them, so they agree).
func sinceCommands(paneID string) []tmux.Command {
	return []tmux.Command{
		{"list-panes", "-t", paneID, "-F", tmux.Format(sinceFields...)},
		{"display-message", "-p", "-t", paneID, "%s"},
		{"capture-pane", "-p", "-t", paneID, "-S", "-", "-E", "-"},
	}
}

// sinceRead builds, from the outputs of sinceCommands, the read and the
// state a cursor issued on it keeps; every tool that hands out a
// capture_since cursor reads the pane this way.
func (c *Call) sinceRead(store *cursorStore, paneID string, outs [][]byte) (*sinceSnap, *sinceState, tmux.Row, error) {
	st, err := rowFor(outs[0], sinceFields, paneID)
	if err != nil {
		return nil, nil, nil, err
	}
	grid := splitRows(outs[2])
	clock, _ := strconv.ParseInt(strings.TrimSpace(string(outs[1])), 10, 64)
	activity, _ := strconv.ParseInt(st["window_activity"], 10, 64)
	snap := &sinceSnap{HS: atoi(st["history_size"]), Limit: atoi(st["history_limit"]), Width: atoi(st["pane_width"]),
		Height: atoi(st["pane_height"]), CursorX: atoi(st["cursor_x"]), CursorY: atoi(st["cursor_y"]), Alt: st["alternate_on"] == "1",
		Activity: activity, Clock: clock, Grid: grid, Hashes: store.hashRows(grid)}
	now := snap.remember()
	now.Socket, now.Server = realPath(st["socket_path"]), st["pid"]+"/"+st["start_time"]
	if c.host != "" { // a remote path: never resolved here, and named with its host
		now.Socket = c.host + ":" + st["socket_path"]
	}
	now.Pane, now.PanePID = paneID, st["pane_pid"]
	return snap, now, st, nil
}

func trimBlankTail(rows []string) []string {
	n := len(rows)
	for n > 0 && strings.TrimRight(rows[n-1], " ") == "" {
		n--
	}
	out := make([]string, n)
	for i := range out {
		out[i] = strings.TrimRight(rows[i], " ")
	}
	return out
}

// limitLinesBytes keeps the tail: at most maxLines lines, then at most
// maxBytes bytes (counting a newline per line); a single line longer than
// maxBytes keeps its last maxBytes bytes.
func limitLinesBytes(lines []string, maxLines, maxBytes int) ([]string, int, int) {
	droppedLines := 0
	if len(lines) > maxLines {
		droppedLines = len(lines) - maxLines
		lines = lines[droppedLines:]
	}
	total := 0
	for _, l := range lines {
		total += len(l) + 1
	}
	droppedBytes := 0
	for len(lines) > 1 && total > maxBytes {
		droppedBytes += len(lines[0]) + 1
		total -= len(lines[0]) + 1
		lines = lines[1:]
	}
	if len(lines) == 1 && len(lines[0]) > maxBytes {
		cut := len(lines[0]) - maxBytes
		for cut < len(lines[0]) && lines[0][cut]&0xC0 == 0x80 {
			cut++
		}
		droppedBytes += cut
		lines = []string{lines[0][cut:]}
	}
	return lines, droppedLines, droppedBytes
}
