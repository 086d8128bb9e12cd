package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, captureSinceTools) }

type captureSinceArgs struct {
	Cursor *string `json:"cursor" desc:"Cursor from the previous capture_since call; omit on the first call."`
	PaneTarget
	MaxLines int `json:"max_lines" default:"500" desc:"Most lines to return (> 0); the tail is kept."`
	MaxBytes int `json:"max_bytes" default:"128000" desc:"Most bytes to return (> 0); the tail is kept."`
	SocketArgs
}

// CaptureSinceResult is the reference's capture_since answer.
type CaptureSinceResult struct {
	PaneID         string   `json:"pane_id" desc:"Pane ID"`
	Cursor         string   `json:"cursor" desc:"Pass this to the next call to get only what is new after now."`
	Lines          []string `json:"lines" desc:"Rows written or rewritten since the cursor (the visible screen on the first call)."`
	ElapsedSeconds float64  `json:"elapsed_seconds" desc:"Seconds since the cursor was issued (0 on the first call)."`
	LinesMissed    bool     `json:"lines_missed" desc:"True when output since the cursor could not be located (history cleared or trimmed); lines is then the visible screen."`
	Truncated      bool     `json:"truncated" desc:"True when max_lines or max_bytes cut lines from the head."`
	TruncatedLines int      `json:"truncated_lines" desc:"Lines dropped by max_lines."`
	TruncatedBytes int      `json:"truncated_bytes" desc:"Bytes dropped by max_bytes."`
}

func captureSinceTools() []*Tool {
	return []*Tool{define(Tool{
		Name: "capture_since", Title: "Capture Since", Toolset: "pane", Tier: config.Readonly, Preset: RO,
		Description: "Read only what a pane printed since your last look: the first call returns the visible screen and a cursor; " +
			"each later call with that cursor returns the rows written or rewritten since, and a new cursor. " +
			"Use it to follow a long-running program across turns without re-reading the screen.",
	}, func(ctx context.Context, c *Call, a captureSinceArgs) (CaptureSinceResult, error) {
		return c.captureSince(ctx, a)
	})}
}

// sinceCursor is what a capture_since cursor carries. It is signed with a
// key that lives only in this process and names the tmux server by socket
// path, pid and start time, so a forged cursor, one from another server
// process, or one from before a tmux restart (when pane ids start again at
// %0) is refused instead of silently reading the wrong pane.
type sinceCursor struct {
	V         int      `json:"v"`
	Socket    string   `json:"s"`
	ServerPID string   `json:"sp"`
	Start     string   `json:"st"`
	PaneID    string   `json:"p"`
	PanePID   string   `json:"pp"`
	History   int      `json:"hs"`
	Height    int      `json:"h"`
	Anchor    int      `json:"a"`
	AnchorSum string   `json:"ah"`
	Below     []string `json:"bh"`
	Issued    int64    `json:"t"` // Unix milliseconds
}

const cursorPrefix = "capture-since-v2:"

var sinceFields = []string{"pane_id", "pane_pid", "pane_dead", "history_size", "history_limit", "cursor_y", "pane_height",
	"pid", "start_time", "socket_path"}

func (s *Server) cursorKey() []byte {
	s.keyOnce.Do(func() {
		s.key = make([]byte, 32)
		_, _ = rand.Read(s.key)
	})
	return s.key
}

func (s *Server) signCursor(cur sinceCursor) string {
	body, _ := json.Marshal(cur)
	mac := hmac.New(sha256.New, s.cursorKey())
	mac.Write(body)
	return cursorPrefix + base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Server) openCursor(text string) (sinceCursor, error) {
	var cur sinceCursor
	bad := expectedf("cursor is not a capture_since cursor issued by this server process; call capture_since without a cursor to start again")
	rest, ok := strings.CutPrefix(text, cursorPrefix)
	if !ok {
		return cur, bad
	}
	b64body, b64sig, ok := strings.Cut(rest, ".")
	if !ok {
		return cur, bad
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64body)
	sig, err2 := base64.RawURLEncoding.DecodeString(b64sig)
	if err1 != nil || err2 != nil {
		return cur, bad
	}
	mac := hmac.New(sha256.New, s.cursorKey())
	mac.Write(body)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return cur, bad
	}
	if json.Unmarshal(body, &cur) != nil || cur.V != 2 {
		return cur, bad
	}
	return cur, nil
}

func rowSum(row string) string {
	h := sha256.Sum256([]byte(strings.TrimRight(row, " ")))
	return hex.EncodeToString(h[:8])
}

func (c *Call) captureSince(ctx context.Context, a captureSinceArgs) (CaptureSinceResult, error) {
	if a.MaxLines <= 0 || a.MaxBytes <= 0 {
		return CaptureSinceResult{}, expectedf("max_lines and max_bytes must be positive")
	}
	var prev *sinceCursor
	if s := str(a.Cursor); s != "" {
		cur, err := c.openCursor(s)
		if err != nil {
			return CaptureSinceResult{}, err
		}
		prev = &cur
	}
	sock := c.Socket(a.SocketArgs)
	// A cursor names its pane (signed), so the target arguments can only
	// agree with it.
	var paneID string
	if prev != nil {
		if id := str(a.PaneID); id != "" && id != prev.PaneID {
			return CaptureSinceResult{}, expectedf("the cursor belongs to pane %s, not %s", prev.PaneID, id)
		}
		paneID = prev.PaneID
	} else {
		id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
		if err != nil {
			return CaptureSinceResult{}, err
		}
		paneID = id
	}
	// State and the whole grid in one round trip: tmux runs a command list
	// without reading pane output in between, so the two agree.
	outs, err := c.tmux.Run(ctx, sock,
		tmux.Command{"list-panes", "-t", paneID, "-F", tmux.Format(sinceFields...)},
		tmux.Command{"capture-pane", "-p", "-t", paneID, "-S", "-", "-E", "-"})
	if err != nil {
		return CaptureSinceResult{}, notFoundAs(err, "pane", paneID)
	}
	st, err := rowFor(outs[0], sinceFields, paneID)
	if err != nil {
		return CaptureSinceResult{}, err
	}
	if st["pane_dead"] == "1" {
		return CaptureSinceResult{}, deadPane(paneID)
	}
	grid := splitRows(outs[1])
	hs, cy, height := atoi(st["history_size"]), atoi(st["cursor_y"]), atoi(st["pane_height"])
	limit := atoi(st["history_limit"])
	now := sinceCursor{V: 2, Socket: realPath(st["socket_path"]), ServerPID: st["pid"], Start: st["start_time"],
		PaneID: paneID, PanePID: st["pane_pid"], History: hs, Height: height, Anchor: hs + cy, Issued: time.Now().UnixMilli()}
	if now.Anchor < len(grid) {
		now.AnchorSum = rowSum(grid[now.Anchor])
		for _, r := range grid[now.Anchor+1:] {
			now.Below = append(now.Below, rowSum(r))
		}
	}
	visible := grid
	if hs <= len(grid) {
		visible = grid[hs:]
	}
	res := CaptureSinceResult{PaneID: paneID, Cursor: c.signCursor(now)}
	var lines []string
	if prev == nil {
		lines = trimBlankTail(visible)
	} else {
		if prev.Socket != now.Socket || prev.ServerPID != now.ServerPID || prev.Start != now.Start {
			return CaptureSinceResult{}, expectedf("the cursor was issued for another tmux server (or before it restarted); call capture_since without a cursor")
		}
		if prev.PanePID != now.PanePID {
			return CaptureSinceResult{}, expectedf("pane %s was respawned since the cursor was issued; call capture_since without a cursor", paneID)
		}
		res.ElapsedSeconds = roundMs(time.Duration(now.Issued-prev.Issued) * time.Millisecond)
		var missed bool
		lines, missed = sinceRows(prev, grid, hs, height, limit)
		if missed {
			res.LinesMissed = true
			lines = trimBlankTail(visible)
		}
	}
	lines, res.TruncatedLines, res.TruncatedBytes = limitLinesBytes(lines, a.MaxLines, a.MaxBytes)
	res.Truncated = res.TruncatedLines > 0 || res.TruncatedBytes > 0
	if lines == nil {
		lines = []string{}
	}
	res.Lines = lines
	return res, nil
}

// sinceRows finds the previous anchor row in the current grid and returns
// the rows after it that are new or rewritten. It reports missed when the
// anchor cannot be located with confidence.
func sinceRows(prev *sinceCursor, grid []string, hs, height, limit int) ([]string, bool) {
	band := limit - max(limit/10, 1)
	if hs == 0 && prev.History > 0 {
		return nil, true // history cleared
	}
	idx := prev.Anchor
	trimmed := hs < prev.History && height <= prev.Height
	if trimmed || (limit > 0 && (hs >= band || prev.History >= band)) {
		// tmux may have dropped the oldest rows: find the anchor by its
		// fingerprint, and only if it is unique.
		idx = findFingerprint(grid, prev)
		if idx < 0 {
			return nil, true
		}
	}
	if idx >= len(grid) {
		return nil, true
	}
	rest := grid[idx:]
	if rowSum(rest[0]) == prev.AnchorSum {
		rest = rest[1:]
		i := 0
		for i < len(rest) && i < len(prev.Below) && rowSum(rest[i]) == prev.Below[i] {
			i++
		}
		rest = rest[i:]
	}
	return trimBlankTail(rest), false
}

func findFingerprint(grid []string, prev *sinceCursor) int {
	found := -1
	for p := range grid {
		if rowSum(grid[p]) != prev.AnchorSum {
			continue
		}
		ok := true
		for i, sum := range prev.Below {
			if p+1+i >= len(grid) {
				break
			}
			// Rows below the cursor may have been rewritten since; only the
			// first few must match for the position to be believable.
			if i >= 3 {
				break
			}
			if rowSum(grid[p+1+i]) != sum && strings.TrimSpace(grid[p+1+i]) != "" {
				ok = false
				break
			}
		}
		if ok {
			if found >= 0 {
				return -1 // ambiguous
			}
			found = p
		}
	}
	return found
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
