package server

import (
	"context"
	"slices"
	"strconv"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// A listing of the server or of a session asks tmux per pane only what a
// window cannot say for all its panes at once: tmux 3.3a spends ~0.6 µs
// per field and pane looking a name up before computing it, so each field
// not asked per pane is ~0.3 ms less per 500-pane listing. A pane's place
// and size (pane_left, pane_top, pane_width, pane_height) are those of its
// layout cell, which the window's #{window_layout} lists for every pane,
// and its window_id and session_id are its window row's: list-panes gives
// each winlink's panes together in the order list-windows gives the
// winlinks, and both commands run in one command list, so tmux answers
// both from the same state with nothing run in between. layoutPanes
// still checks that every window row's layout names exactly the panes of
// its group, and when one does not (a layout tmux could not dump, longer
// than its 8 KB buffer; a future tmux's format) the listing asks tmux
// those fields per pane instead.

// layoutFields are the pane fields a listing with window rows takes from
// them instead of asking per pane.
var layoutFields = []string{"pane_left", "pane_top", "pane_width", "pane_height", "window_id", "session_id"}

// geometryFields are a pane's place and size, edges and active flag, asked
// of tmux for the panes of a zoomed window: its #{window_layout} is the
// layout saved when it was zoomed, and its hidden panes keep the place and
// size they had then, which a pane-border-status set while it is zoomed
// does not change (layout_fix_panes skips panes without a cell). tmux's
// own answer is the only safe one there; a condition per pane in the first
// listing would cost tmux ~0.6 ms per 500 panes, more than a field, so the
// panes of zoomed windows are asked in one more round trip, only when
// there are any. The edges and the active flag come with the geometry, all
// from that one moment: edges computed from it with the first listing's
// pane-border-status would mix two moments.
var geometryFields = []string{"pane_id", "pane_left", "pane_top", "pane_width", "pane_height",
	"pane_at_right", "pane_at_top", "pane_at_bottom", "pane_active"}

// layoutAsk is what a listing with window rows asks per pane of fields:
// fields without the layout fields.
func layoutAsk(fields []string) []string {
	return slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return slices.Contains(layoutFields, f) })
}

// paneCell is a pane's cell in a window layout.
type paneCell struct {
	pane       string // the pane's id, "%N"
	x, y, w, h int
	// top and bottom: the cell is first (last) in every top-bottom split
	// above it (layout.c's layout_cell_is_top and layout_cell_is_bottom),
	// so a top (bottom) pane-border-status takes a line from it.
	top, bottom bool
}

// layoutPaneCells reads a #{window_layout} (a checksum, a comma, the root
// cell: see layoutParser) into its panes' cells, in the layout's order.
// ok is false when it cannot be read or has a cell without a pane (tmux
// writes no id then; a layout too long for tmux's buffer is empty).
func layoutPaneCells(l string) (cells []paneCell, ok bool) {
	if len(l) < 6 || l[4] != ',' {
		return nil, false
	}
	p := &layoutParser{s: l[5:]}
	root, ok := p.cell(0)
	if !ok || p.i != len(p.s) {
		return nil, false
	}
	return root.paneCells(true, true, nil)
}

// paneCells appends the pane cells under c; top and bottom say whether c
// is at the top and at the bottom of its window.
func (c *layoutCell) paneCells(top, bottom bool, out []paneCell) ([]paneCell, bool) {
	if c.kind == 0 {
		if c.pane < 0 {
			return out, false
		}
		return append(out, paneCell{pane: "%" + strconv.Itoa(c.pane), x: c.x, y: c.y, w: c.w, h: c.h, top: top, bottom: bottom}), true
	}
	for i, k := range c.kids {
		kt, kb := top, bottom
		if c.kind == '[' {
			kt, kb = top && i == 0, bottom && i == len(c.kids)-1
		}
		var ok bool
		if out, ok = k.paneCells(kt, kb, out); !ok {
			return out, false
		}
	}
	return out, true
}

// geometry is the place and size tmux gives the cell's pane in a window
// whose pane-border-status is status (layout.c, layout_fix_panes): the
// cell's, less the border line a top status takes from the top cells
// (moving them down one) and a bottom one from the bottom cells. ok is
// false where tmux's unsigned arithmetic would wrap.
func (c paneCell) geometry(status string) (left, top, width, height int, ok bool) {
	left, top, width, height = c.x, c.y, c.w, c.h
	if status == "top" && c.top {
		top++
		height--
	} else if status == "bottom" && c.bottom {
		height--
	}
	return left, top, width, height, height >= 0
}

// layoutPanes gives each pane row the layout fields from the window rows
// (see above): rows, as list-panes gave them, come in one group per window
// row, each group the panes of that window's layout in the window's own
// order (so a pane's place in its group plus the window's pane-base-index
// is its index), with the edges and active flag windowEdges and
// deriveEdges would give them. The panes of a zoomed window get all but
// their place, size and edges, and are returned in zoomed (see
// geometryFields). A field a row has already is kept. ok is false, and rows may be partly filled, when a
// layout cannot be read or does not name exactly its group's panes, or
// the groups do not cover the rows.
func layoutPanes(rows, wins []tmux.Row) (zoomed []tmux.Row, ok bool) {
	i := 0
	for _, w := range wins {
		cells, ok := layoutPaneCells(w["window_layout"])
		if !ok || len(cells) > len(rows)-i {
			return nil, false
		}
		group := rows[i : i+len(cells)]
		i += len(cells)
		used := make([]bool, len(cells))
		base, errBase := strconv.Atoi(w["pane-base-index"])
		ww, errWW := strconv.Atoi(w["window_width"])
		wh, errWH := strconv.Atoi(w["window_height"])
		status := w["pane-border-status"]
		for k, r := range group {
			// The layout's order is usually the panes' own.
			at := -1
			if cells[k].pane == r["pane_id"] {
				at = k
			} else {
				for j := range cells {
					if cells[j].pane == r["pane_id"] {
						at = j
						break
					}
				}
			}
			if at < 0 || used[at] {
				return nil, false
			}
			used[at] = true
			if w["window_zoomed_flag"] != "0" {
				zoomed = append(zoomed, r)
			} else {
				left, top, width, height, ok := cells[at].geometry(status)
				if !ok || errWW != nil || errWH != nil {
					return nil, false
				}
				setAbsent(r, "pane_left", strconv.Itoa(left))
				setAbsent(r, "pane_top", strconv.Itoa(top))
				setAbsent(r, "pane_width", strconv.Itoa(width))
				setAbsent(r, "pane_height", strconv.Itoa(height))
				// What windowEdges and deriveEdges would parse back.
				setAbsent(r, "pane_at_right", flag(atRight(left, width, ww)))
				setAbsent(r, "pane_at_top", flag(atTop(top, status)))
				setAbsent(r, "pane_at_bottom", flag(atBottom(top, height, wh, status)))
				setAbsent(r, "pane_right", strconv.Itoa(left+width-1))
				setAbsent(r, "pane_bottom", strconv.Itoa(top+height-1))
				setAbsent(r, "pane_at_left", flag(left == 0))
			}
			if active := w["pane_id"]; active != "" {
				setAbsent(r, "pane_active", flag(r["pane_id"] == active))
			}
			if errBase == nil {
				setAbsent(r, "pane_index", strconv.Itoa(base+k))
			}
			setAbsent(r, "window_id", w["window_id"])
			setAbsent(r, "session_id", w["session_id"])
		}
	}
	return zoomed, i == len(rows)
}

// zoomedGeometry asks tmux the geometryFields of the zoomed rows' panes:
// one listing of the scope's zoomed windows (it fails only if the scope
// itself is gone). ok is false when a pane is not in the answer (its
// window was unzoomed, or it ended, in between).
func (c *Call) zoomedGeometry(ctx context.Context, sock tmux.Socket, scope []string, zoomed []tmux.Row) (ok bool, err error) {
	cmd := append(append(tmux.Command{"list-panes"}, scope...), "-f", "#{window_zoomed_flag}")
	got, err := c.tmux.Rows(ctx, sock, cmd, geometryFields)
	if err != nil {
		return false, err
	}
	byID := make(map[string]tmux.Row, len(got))
	for _, g := range got {
		byID[g["pane_id"]] = g
	}
	for _, r := range zoomed {
		g, found := byID[r["pane_id"]]
		if !found {
			return false, nil
		}
		for _, f := range geometryFields[1:] {
			r[f] = g[f]
		}
	}
	return true, nil
}

func setAbsent(r tmux.Row, k, v string) {
	if _, have := r[k]; !have {
		r[k] = v
	}
}
