package server

import "github.com/tmux-mcp/tmux-mcp/internal/tmux"

// Result models of the content tools (contract 1.10): snapshot_pane and
// search_panes. Field names, JSON types and required-ness follow the
// reference's pydantic models.

// PaneSnapshot is snapshot_pane's result: the visible screen plus the
// pane's cursor, mode, scroll and geometry state.
type PaneSnapshot struct {
	PaneEdges
	PaneID                string  `json:"pane_id" desc:"Pane ID (e.g. '%1')"`
	Content               string  `json:"content" desc:"Visible pane text"`
	CursorX               int     `json:"cursor_x" desc:"Cursor column (0-based)"`
	CursorY               int     `json:"cursor_y" desc:"Cursor row (0-based)"`
	PaneWidth             int     `json:"pane_width" desc:"Pane width in columns"`
	PaneHeight            int     `json:"pane_height" desc:"Pane height in rows"`
	PanePID               *string `json:"pane_pid" desc:"Process ID"`
	PaneDead              *bool   `json:"pane_dead" desc:"True when tmux reports the pane process has exited."`
	AlternateOn           *bool   `json:"alternate_on" desc:"True when the pane is using the alternate screen."`
	PaneInMode            bool    `json:"pane_in_mode" desc:"True if pane is in copy-mode or view-mode"`
	PaneMode              *string `json:"pane_mode" desc:"Mode name (e.g. 'copy-mode') or None if normal"`
	ScrollPosition        *int    `json:"scroll_position" desc:"Lines scrolled back in copy mode (None if not in copy mode)"`
	HistorySize           int     `json:"history_size" desc:"Total scrollback lines available"`
	Title                 *string `json:"title" desc:"Pane title"`
	PaneCurrentCommand    *string `json:"pane_current_command" desc:"Running command"`
	PaneCurrentPath       *string `json:"pane_current_path" desc:"Current working directory"`
	IsCaller              *bool   `json:"is_caller" desc:"MCP caller identity for this pane: true when it is the pane this server runs in (same TMUX_PANE and same socket), false otherwise, null when the server is not running inside tmux."`
	ContentTruncated      bool    `json:"content_truncated" default:"false" desc:"True if content was tail-preserved to stay within max_lines; oldest lines were dropped."`
	ContentTruncatedLines int     `json:"content_truncated_lines" default:"0" desc:"Number of lines dropped from the head when truncating."`
	// Styles: the styled spans of content when asked for (styles.go).
	Styles []string `json:"styles,omitzero" default:"[]" desc:"Styled spans of content (styles: true). Addition of tmux-mcp."`
	OnHost
}

// snapshotFields are read by one display-message in the same round trip as
// the capture. socket_path feeds is_caller; pane_current_path goes last
// because it is the one free-form field (see tmux.ParseRows).
var snapshotFields = append(append([]string{"pane_id", "cursor_x", "cursor_y"}, edgeFields...),
	"pane_pid", "pane_dead", "alternate_on",
	"pane_in_mode", "pane_mode", "scroll_position", "history_size",
	"pane_title", "socket_path", "pane_current_command", "pane_current_path")

func (s *Server) paneSnapshot(r tmux.Row, content string, dropped int) PaneSnapshot {
	return PaneSnapshot{
		PaneEdges:             paneEdges(r),
		PaneID:                r["pane_id"],
		Content:               content,
		CursorX:               atoi(r["cursor_x"]),
		CursorY:               atoi(r["cursor_y"]),
		PaneWidth:             atoi(r["pane_width"]),
		PaneHeight:            atoi(r["pane_height"]),
		PanePID:               strp(r, "pane_pid"),
		PaneDead:              boolp(r, "pane_dead"),
		AlternateOn:           boolp(r, "alternate_on"),
		PaneInMode:            r["pane_in_mode"] == "1",
		PaneMode:              strp(r, "pane_mode"),
		ScrollPosition:        intp(r, "scroll_position"),
		HistorySize:           atoi(r["history_size"]),
		Title:                 strp(r, "pane_title"),
		PaneCurrentCommand:    strp(r, "pane_current_command"),
		PaneCurrentPath:       strp(r, "pane_current_path"),
		IsCaller:              s.isCaller(r["pane_id"], r["socket_path"]),
		ContentTruncated:      dropped > 0,
		ContentTruncatedLines: dropped,
	}
}

// PaneContentMatch is one pane whose content matched a search_panes pattern.
type PaneContentMatch struct {
	PaneEdges
	PaneID             string   `json:"pane_id" desc:"Pane ID (e.g. '%1')"`
	PaneCurrentCommand *string  `json:"pane_current_command" desc:"Running command"`
	PaneCurrentPath    *string  `json:"pane_current_path" desc:"Current working directory"`
	WindowID           *string  `json:"window_id" desc:"Parent window ID"`
	WindowName         *string  `json:"window_name" desc:"Parent window name"`
	SessionID          *string  `json:"session_id" desc:"Parent session ID"`
	SessionName        *string  `json:"session_name" desc:"Parent session name"`
	MatchedLines       []string `json:"matched_lines" desc:"Lines containing the match"`
	IsCaller           *bool    `json:"is_caller" desc:"MCP caller identity for this pane: true when it is the pane this server runs in (same TMUX_PANE and same socket), false otherwise, null when the server is not running inside tmux."`
	OnHost
}

// searchFields are the list-panes fields a PaneContentMatch is built from.
var searchFields = append(append([]string{"pane_id"}, edgeFields...),
	"window_id", "window_name", "session_id", "session_name",
	"socket_path", "pane_current_command", "pane_current_path")

func (s *Server) paneContentMatch(r tmux.Row, lines []string) PaneContentMatch {
	return PaneContentMatch{
		PaneEdges:          paneEdges(r),
		PaneID:             r["pane_id"],
		PaneCurrentCommand: strp(r, "pane_current_command"),
		PaneCurrentPath:    strp(r, "pane_current_path"),
		WindowID:           strp(r, "window_id"),
		WindowName:         strp(r, "window_name"),
		SessionID:          strp(r, "session_id"),
		SessionName:        strp(r, "session_name"),
		MatchedLines:       lines,
		IsCaller:           s.isCaller(r["pane_id"], r["socket_path"]),
	}
}

// SearchPanesResult is one page of search_panes matches.
type SearchPanesResult struct {
	Matches           []PaneContentMatch `json:"matches" default:"[]" desc:"PaneContentMatch entries for this page."`
	Truncated         bool               `json:"truncated" default:"false" desc:"True when the result set was truncated by limit or by max_matched_lines_per_pane on any pane."`
	TruncatedPanes    []string           `json:"truncated_panes" default:"[]" desc:"Pane IDs that matched but were skipped because the global limit was already satisfied. Re-request with a larger offset to retrieve them."`
	TotalPanesMatched int                `json:"total_panes_matched" desc:"Total number of panes that matched the pattern before offset / limit were applied."`
	Offset            int                `json:"offset" desc:"The offset that produced this page."`
	Limit             *int               `json:"limit" desc:"The limit that produced this page."`
}
