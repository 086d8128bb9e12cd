package server

import (
	"strconv"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// The result models keep the reference's field names and JSON types
// exactly, including its oddities (pane_width is a string, pane_left an
// integer), so clients written against it parse ours unchanged.

// PaneInfo is the reference's serialized pane.
type PaneInfo struct {
	PaneEdges
	IsCaller           *bool   `json:"is_caller" desc:"MCP caller identity for this pane. True when the pane matches the caller's TMUX_PANE and lives on the same tmux socket as the caller's TMUX (verified via socket realpath); False otherwise, including the case where the pane id matches but the socket does not or cannot be proven to; None when the MCP process is not running inside tmux at all."`
	PaneActive         *string `json:"pane_active" desc:"Active flag ('1' or '0')"`
	PaneCurrentCommand *string `json:"pane_current_command" desc:"Running command"`
	PaneCurrentPath    *string `json:"pane_current_path" desc:"Current working directory"`
	PaneHeight         *string `json:"pane_height" desc:"Height in rows"`
	PaneID             string  `json:"pane_id" desc:"Pane ID (e.g. '%1')"`
	PaneIndex          *string `json:"pane_index" desc:"Pane index"`
	PanePID            *string `json:"pane_pid" desc:"Process ID"`
	PaneTitle          *string `json:"pane_title" desc:"Pane title"`
	PaneWidth          *string `json:"pane_width" desc:"Width in columns"`
	SessionID          *string `json:"session_id" desc:"Parent session ID"`
	WindowID           *string `json:"window_id" desc:"Parent window ID"`
	OnHost
}

// PaneEdges is the geometry that every pane model (PaneInfo, PaneSnapshot,
// PaneContentMatch) reports; the schema builder and encoding/json both
// flatten it into the model's own fields.
type PaneEdges struct {
	PaneLeft     *int    `json:"pane_left" desc:"Left edge column, 0-based and window-relative."`
	PaneTop      *int    `json:"pane_top" desc:"Top edge row, 0-based and window-relative."`
	PaneRight    *int    `json:"pane_right" desc:"Right edge column (inclusive), window-relative."`
	PaneBottom   *int    `json:"pane_bottom" desc:"Bottom edge row (inclusive), window-relative."`
	PaneAtLeft   *bool   `json:"pane_at_left" desc:"True when the pane touches the window's left edge."`
	PaneAtRight  *bool   `json:"pane_at_right" desc:"True when the pane touches the window's right edge."`
	PaneAtTop    *bool   `json:"pane_at_top" desc:"True when the pane touches the window's top edge (tmux accounts for pane-border-status)."`
	PaneAtBottom *bool   `json:"pane_at_bottom" desc:"True when the pane touches the window's bottom edge."`
	PaneTTY      *string `json:"pane_tty" desc:"TTY device path of the pane (e.g. '/dev/pts/5')."`
}

// paneEdges reads a pane's geometry from a row of edgeFields (or of any
// field list with the edges).
func paneEdges(r tmux.Row) PaneEdges { return paneEdgesIn(r, new(paneVals)) }

// paneEdgesIn is paneEdges with its values held in v.
func paneEdgesIn(r tmux.Row, v *paneVals) PaneEdges {
	deriveEdges(r)
	return PaneEdges{
		PaneLeft:     v.int(r, "pane_left"),
		PaneTop:      v.int(r, "pane_top"),
		PaneRight:    v.int(r, "pane_right"),
		PaneBottom:   v.int(r, "pane_bottom"),
		PaneAtLeft:   v.bool(r, "pane_at_left"),
		PaneAtRight:  v.bool(r, "pane_at_right"),
		PaneAtTop:    v.bool(r, "pane_at_top"),
		PaneAtBottom: v.bool(r, "pane_at_bottom"),
		PaneTTY:      v.str(r, "pane_tty"),
	}
}

// paneVals holds the values a PaneInfo's fields point to: one allocation
// per pane instead of one per field (twenty; 10,000 in a 500-pane
// listing, most of its garbage). Each method is strp, intp or boolp,
// taking the next slot.
type paneVals struct {
	s          [12]string
	n          [4]int
	b          [5]bool
	ns, nn, nb int
}

func (v *paneVals) str(r tmux.Row, k string) *string {
	x, ok := r[k]
	if !ok || x == "" || v.ns == len(v.s) {
		return strp(r, k)
	}
	p := &v.s[v.ns]
	*p = x
	v.ns++
	return p
}

func (v *paneVals) int(r tmux.Row, k string) *int {
	x, err := strconv.Atoi(r[k])
	if err != nil || v.nn == len(v.n) {
		return intp(r, k)
	}
	p := &v.n[v.nn]
	*p = x
	v.nn++
	return p
}

func (v *paneVals) bool(r tmux.Row, k string) *bool {
	x := r[k]
	if x != "0" && x != "1" || v.nb == len(v.b) {
		return boolp(r, k)
	}
	p := &v.b[v.nb]
	*p = x == "1"
	v.nb++
	return p
}

// edgeFields are what tmux is asked for a pane's geometry. pane_right,
// pane_bottom and pane_at_left are not among them: deriveEdges computes them
// from these with tmux's own formulas. tmux 3.3a looks every format
// variable up in six option tables before its own list, a few microseconds
// per field and pane, so each field not asked for is a few milliseconds
// less per 500-pane listing.
var edgeFields = []string{"pane_left", "pane_top", "pane_width", "pane_height",
	"pane_at_right", "pane_at_top", "pane_at_bottom", "pane_tty"}

// deriveEdges adds to a row the edges tmux computes from the others
// (format.c: pane_right is xoff+sx-1, pane_bottom yoff+sy-1, pane_at_left
// xoff==0), unless the row has them already (a filter asked for them). A
// row without the geometry (a pane that is gone) gets none.
func deriveEdges(r tmux.Row) {
	left, errL := strconv.Atoi(r["pane_left"])
	top, errT := strconv.Atoi(r["pane_top"])
	width, errW := strconv.Atoi(r["pane_width"])
	height, errH := strconv.Atoi(r["pane_height"])
	if _, ok := r["pane_right"]; !ok && errL == nil && errW == nil {
		r["pane_right"] = strconv.Itoa(left + width - 1)
	}
	if _, ok := r["pane_bottom"]; !ok && errT == nil && errH == nil {
		r["pane_bottom"] = strconv.Itoa(top + height - 1)
	}
	if _, ok := r["pane_at_left"]; !ok && errL == nil {
		r["pane_at_left"] = "0"
		if left == 0 {
			r["pane_at_left"] = "1"
		}
	}
}

// paneFields are the tmux format variables a PaneInfo is built from, and
// nothing more. socket_path is read in the same query so is_caller costs
// no extra round trip; pane_current_path goes last because a path is the
// one free-form field (see tmux.ParseRows).
var paneFields = append(append([]string{"pane_id", "pane_index"}, edgeFields...),
	"pane_pid", "pane_title", "pane_active", "window_id", "session_id",
	"socket_path", "pane_current_command", "pane_current_path")

func (s *Server) paneInfo(r tmux.Row) PaneInfo {
	v := new(paneVals)
	return PaneInfo{
		PaneEdges:          paneEdgesIn(r, v),
		IsCaller:           s.isCaller(r["pane_id"], r["socket_path"]),
		PaneActive:         v.str(r, "pane_active"),
		PaneCurrentCommand: v.str(r, "pane_current_command"),
		PaneCurrentPath:    v.str(r, "pane_current_path"),
		PaneHeight:         v.str(r, "pane_height"),
		PaneID:             r["pane_id"],
		PaneIndex:          v.str(r, "pane_index"),
		PanePID:            v.str(r, "pane_pid"),
		PaneTitle:          v.str(r, "pane_title"),
		PaneWidth:          v.str(r, "pane_width"),
		SessionID:          v.str(r, "session_id"),
		WindowID:           v.str(r, "window_id"),
	}
}

// strp returns the field as a pointer, or nil when tmux left it empty (the
// reference reports missing values as null).
func strp(r tmux.Row, k string) *string {
	v, ok := r[k]
	if !ok || v == "" {
		return nil
	}
	return &v
}

func intp(r tmux.Row, k string) *int {
	n, err := strconv.Atoi(r[k])
	if err != nil {
		return nil
	}
	return &n
}

func boolp(r tmux.Row, k string) *bool {
	switch r[k] {
	case "1":
		t := true
		return &t
	case "0":
		f := false
		return &f
	}
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// SessionInfo is the reference's serialized session.
type SessionInfo struct {
	SessionID       string  `json:"session_id" desc:"Session ID (e.g. '$1')"`
	SessionName     *string `json:"session_name" desc:"Session name"`
	WindowCount     *int    `json:"window_count" desc:"Number of windows"`
	SessionAttached *string `json:"session_attached" desc:"Number of clients attached (tmux-mcp's own control clients are not counted)"`
	SessionCreated  *string `json:"session_created" desc:"Creation time (Unix seconds)"`
	ActivePaneID    *string `json:"active_pane_id" desc:"Active pane of the session's current window"`
	OnHost
}

// sessionFields feed SessionInfo; in a list-sessions (or display-message)
// context #{pane_id} is the active pane of the session's current window.
var sessionFields = []string{"session_id", "session_name", "session_windows", "session_attached", "session_created", "pane_id"}

func sessionInfo(r tmux.Row) SessionInfo {
	return SessionInfo{
		SessionID:       r["session_id"],
		SessionName:     strp(r, "session_name"),
		WindowCount:     intp(r, "session_windows"),
		SessionAttached: strp(r, "session_attached"),
		SessionCreated:  strp(r, "session_created"),
		ActivePaneID:    strp(r, "pane_id"),
	}
}

// WindowInfo is the reference's serialized window.
type WindowInfo struct {
	WindowID     string  `json:"window_id" desc:"Window ID (e.g. '@1')"`
	WindowName   *string `json:"window_name" desc:"Window name"`
	WindowIndex  *string `json:"window_index" desc:"Window index within its session"`
	SessionID    *string `json:"session_id" desc:"Parent session ID"`
	SessionName  *string `json:"session_name" desc:"Parent session name"`
	PaneCount    *int    `json:"pane_count" desc:"Number of panes"`
	WindowLayout *string `json:"window_layout" desc:"Layout string"`
	WindowActive *string `json:"window_active" desc:"Active flag ('1' or '0')"`
	WindowWidth  *string `json:"window_width" desc:"Width in columns"`
	WindowHeight *string `json:"window_height" desc:"Height in rows"`
	ActivePaneID *string `json:"active_pane_id" desc:"Active pane of the window"`
	OnHost
}

// windowFields feed WindowInfo; in a window context #{pane_id} is the
// window's active pane.
var windowFields = []string{"window_id", "window_name", "window_index", "session_id", "session_name", "window_panes",
	"window_layout", "window_active", "window_width", "window_height", "pane_id"}

func windowInfo(r tmux.Row) WindowInfo {
	return WindowInfo{
		WindowID:     r["window_id"],
		WindowName:   strp(r, "window_name"),
		WindowIndex:  strp(r, "window_index"),
		SessionID:    strp(r, "session_id"),
		SessionName:  strp(r, "session_name"),
		PaneCount:    intp(r, "window_panes"),
		WindowLayout: strp(r, "window_layout"),
		WindowActive: strp(r, "window_active"),
		WindowWidth:  strp(r, "window_width"),
		WindowHeight: strp(r, "window_height"),
		ActivePaneID: strp(r, "pane_id"),
	}
}

// ServerInfo is the reference's serialized server.
type ServerInfo struct {
	IsAlive      bool    `json:"is_alive" desc:"Whether a tmux server answers on this socket"`
	SocketName   *string `json:"socket_name" desc:"Socket name (tmux -L), when known"`
	SocketPath   *string `json:"socket_path" desc:"Socket path (tmux -S), when known"`
	SessionCount *int    `json:"session_count" desc:"Number of sessions (0 when the server is not running)"`
	Version      *string `json:"version" desc:"tmux version of the server"`
	OnHost
}

// ServerRow is one row of list_servers: a ServerInfo, and for a remote
// host that could not be reached, why (that host's one row, is_alive
// false). get_server_info checks one socket and fails when its host
// cannot be reached, so its result has no such field.
type ServerRow struct {
	ServerInfo
	HostError *string `json:"host_error,omitempty" desc:"Why the remote host could not be reached. Addition of tmux-mcp."`
}
