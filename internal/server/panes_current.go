package server

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// A pane listing's #{pane_current_command} and #{pane_current_path} are
// most of what tmux spends on it: per pane, two terminal ioctls, a
// /proc/PID/cmdline read and a /proc/PID/cwd readlink, on tmux's single
// thread (at 500 panes, ~5 ms of an ~13 ms list-panes). When the tmux
// server runs on this machine and this process sees its processes, list_panes
// reads those two facts itself (foreground.PaneProc: what tmux 3.3a's
// osdep-linux.c reads, named as its names.c names it), for a listing of the
// whole server while tmux is still answering for the rest. A pane whose
// facts cannot be read so, or do not prove to be the pane's (not the
// server's child, not on the pane's terminal: another pid namespace, an
// ended pane, a foreground group without a leader), gets tmux's own answer
// in one more round trip, so every value is one tmux would have given just
// before or just after the call.

// paneListFields are what list_panes asks tmux per pane when the current
// command and path come from the OS: paneFields without them, without
// socket_path (the server's), and without what a pane's window decides
// (its edges against the window's, its index, whether it is the active
// one): a listing of the server or of a session computes those from one
// row per window (windowEdges, paneIndexes), which also carries the
// server's pid and socket path; a listing of one window asks for them per
// pane (windowScopeFields). tmux 3.3a spends ~1 µs per field and pane
// looking the name up before computing it.
var paneListFields = slices.DeleteFunc(slices.Clone(paneFields), func(f string) bool {
	return slices.Contains(derivedFields, f)
})

// derivedFields are the paneFields a fast listing does not ask per pane.
var derivedFields = []string{"pane_current_command", "pane_current_path", "socket_path",
	"pane_at_right", "pane_at_top", "pane_at_bottom", "pane_index", "pane_active"}

// windowRowFields are asked once per window of a listing of the server or
// of a session (#{pane_id} there is the window's active pane), with its
// session, its layout (panes_layout.go) and the server's pid and socket
// path (the free-form path last), so the listing is two commands.
var windowRowFields = []string{"window_id", "window_width", "window_height", "pane-base-index", "pane_id",
	"pane-border-status", "session_id", "window_zoomed_flag", "window_layout", "pid", "socket_path"}

// windowScopeFields are what a listing of one window asks per pane instead
// of a window row: the fields windowEdges and paneIndexes compute, and the
// server's pid and socket path (last).
var windowScopeFields = []string{"pane_at_right", "pane_at_top", "pane_at_bottom", "pane_index", "pane_active", "pid", "socket_path"}

// byWindowRows reports whether a list-panes scope is listed with a window
// row per window: the whole server (-a) or a session (-s -t S).
func byWindowRows(scope []string) bool {
	return slices.Equal(scope, []string{"-a"}) || len(scope) == 3 && scope[0] == "-s"
}

// windowsOf is the list-windows command of such a scope.
func windowsOf(scope []string) tmux.Command {
	f := tmux.Format(windowRowFields...)
	if scope[0] == "-a" {
		return tmux.Command{"list-windows", "-a", "-F", f}
	}
	return tmux.Command{"list-windows", "-t", scope[2], "-F", f}
}

// windowEdges adds to a pane's row what tmux computes from its window
// (format.c, 3.3a): pane_active is whether it is the window's active pane,
// and its edges against the window's (atRight, atTop, atBottom). A field
// the row has already (asked for by a filter) is kept; a row whose window
// or geometry is unknown gets none.
func windowEdges(r, w tmux.Row) {
	left, errL := strconv.Atoi(r["pane_left"])
	top, errT := strconv.Atoi(r["pane_top"])
	width, errW := strconv.Atoi(r["pane_width"])
	height, errH := strconv.Atoi(r["pane_height"])
	ww, errWW := strconv.Atoi(w["window_width"])
	wh, errWH := strconv.Atoi(w["window_height"])
	set := func(k string, ok bool, v func() bool) {
		if _, have := r[k]; !have && ok {
			r[k] = flag(v())
		}
	}
	status := w["pane-border-status"]
	set("pane_at_right", errL == nil && errW == nil && errWW == nil, func() bool { return atRight(left, width, ww) })
	set("pane_at_top", errT == nil && w != nil, func() bool { return atTop(top, status) })
	set("pane_at_bottom", errT == nil && errH == nil && errWH == nil, func() bool { return atBottom(top, height, wh, status) })
	set("pane_active", w["pane_id"] != "", func() bool { return r["pane_id"] == w["pane_id"] })
}

// hasAll reports whether r has every one of fields.
func hasAll(r tmux.Row, fields ...string) bool {
	for _, f := range fields {
		if _, ok := r[f]; !ok {
			return false
		}
	}
	return true
}

// atRight is #{pane_at_right}: xoff+sx is the window's width.
func atRight(left, width, windowWidth int) bool { return left+width == windowWidth }

// atTop is #{pane_at_top}: yoff is 0, or 1 under a top pane-border-status.
func atTop(top int, status string) bool {
	if status == "top" {
		return top == 1
	}
	return top == 0
}

// atBottom is #{pane_at_bottom}: yoff+sy is the window's height, less one
// under a bottom pane-border-status.
func atBottom(top, height, windowHeight int, status string) bool {
	if status == "bottom" {
		return top+height == windowHeight-1
	}
	return top+height == windowHeight
}

// flag is a format flag's value.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// paneIndexes adds to rows, as list-panes gives them (each window's panes
// together, in the window's order), the index tmux gives each pane
// (window_pane_index: the window's pane-base-index plus the pane's place in
// that order). A window listed twice in a row (linked at two places) is
// counted on, wrongly, in its second listing, which the listing then drops
// as a duplicate (tmux.DedupeBy keeps the first). A row that has the field
// (a filter asked for it), or whose window is unknown, is left as it is.
func paneIndexes(rows []tmux.Row, byWindow map[string]tmux.Row) {
	var window string
	place := 0
	for _, r := range rows {
		if r["window_id"] != window {
			window, place = r["window_id"], 0
		}
		base, err := strconv.Atoi(byWindow[window]["pane-base-index"])
		if _, have := r["pane_index"]; !have && err == nil {
			r["pane_index"] = strconv.Itoa(base + place)
		}
		place++
	}
}

// currentFallbackMax is the most panes the fallback asks tmux about by id
// (a -f filter of that many comparisons per pane); more, and it asks for
// the whole scope.
const currentFallbackMax = 16

// listPaneRows runs list_panes's query for the scope (list-panes args) and
// returns its rows, kept to the call's confinement and without duplicates
// (a window linked into several sessions), each with every field of fields
// plus those of paneFields. The current command and path are read from the
// OS where that gives tmux's answer (see above), else asked of tmux.
func (c *Call) listPaneRows(ctx context.Context, sock tmux.Socket, scope []string, fields []string) ([]tmux.Row, error) {
	if !c.currentFromOS(fields) {
		rows, err := c.tmux.Rows(ctx, sock, append(tmux.Command{"list-panes"}, scope...), fields)
		if err != nil {
			return nil, err
		}
		return tmux.DedupeBy(c.scopeRows(rows, "pane_id"), "pane_id"), nil
	}
	// The whole server: its children are read while tmux answers, when
	// its pid is known before (the control connection's server, or the one
	// the last listing met; the answer's own pid decides either way), and
	// this goroutine joins the read once its own part of the rows is done.
	var early *foreground.ChildrenRead
	hint := c.serverPIDHint(sock)
	if hint > 0 && slices.Equal(scope, []string{"-a"}) {
		early = foreground.StartServerChildren(hint, c.fgOptions)
	}
	perWindow := byWindowRows(scope)
	rows, wins, err := c.listPanesAt(ctx, sock, scope, fields, perWindow, true)
	if err != nil {
		return nil, err
	}
	if perWindow {
		zoomed, ok := layoutPanes(rows, wins)
		if ok && len(zoomed) > 0 {
			ok, err = c.zoomedGeometry(ctx, sock, scope, zoomed)
		}
		if err == nil && !ok {
			// A layout that does not account for its panes, or a zoomed
			// window changed in between: tmux is asked for the layout
			// fields per pane.
			c.layoutAsked.Add(1)
			rows, wins, err = c.listPanesAt(ctx, sock, scope, fields, perWindow, false)
		}
		if err != nil {
			return nil, err
		}
	}
	server := tmux.Row{}
	byWindow := map[string]tmux.Row{}
	if perWindow {
		for _, w := range wins {
			byWindow[w["window_id"]] = w
		}
		if len(wins) > 0 {
			server = wins[0]
		}
		paneIndexes(rows, byWindow)
	} else if len(rows) > 0 {
		server = rows[0]
	}
	serverPID, _ := strconv.Atoi(server["pid"])
	if serverPID > 0 {
		c.pidHints.Store(sock.String(), serverPID)
	}
	rows = tmux.DedupeBy(c.scopeRows(rows, "pane_id"), "pane_id")
	for _, r := range rows {
		r["socket_path"] = server["socket_path"]
		if perWindow && !hasAll(r, "pane_at_right", "pane_at_top", "pane_at_bottom", "pane_active") {
			windowEdges(r, byWindow[r["window_id"]])
		}
	}
	var procs map[int]foreground.PaneProc
	if early != nil && hint == serverPID { // else another server than the one read early
		procs = early.Wait()
	}
	var missing []int
	for _, r := range rows {
		if pid, err := strconv.Atoi(r["pane_pid"]); err == nil {
			if _, ok := procs[pid]; !ok {
				missing = append(missing, pid)
			}
		}
	}
	if len(missing) > 0 {
		more := foreground.ReadPaneProcs(missing, c.fgOptions)
		if procs == nil {
			procs = more
		} else {
			for pid, p := range more {
				procs[pid] = p
			}
		}
	}
	var ask []tmux.Row
	for _, r := range rows {
		pid, _ := strconv.Atoi(r["pane_pid"])
		if cmd, path, ok := procs[pid].Current(serverPID, r["pane_tty"]); ok {
			r["pane_current_command"], r["pane_current_path"] = cmd, path
			continue
		}
		ask = append(ask, r)
	}
	c.currentRead.Add(int64(len(rows) - len(ask)))
	c.currentAsked.Add(int64(len(ask)))
	if len(ask) > 0 {
		if err := c.askCurrent(ctx, sock, scope, ask); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// listPanesAt runs the listing of scope with fields per pane, in one
// command list with the scope's window rows when perWindow. With
// fromLayout, the layout fields are not asked per pane (layoutAsk: see
// layoutPanes). Rows are as tmux gave them, duplicates and all.
func (c *Call) listPanesAt(ctx context.Context, sock tmux.Socket, scope, fields []string, perWindow, fromLayout bool) (rows, wins []tmux.Row, err error) {
	if !perWindow {
		fields = append(slices.DeleteFunc(slices.Clone(fields), func(f string) bool {
			return slices.Contains(windowScopeFields, f)
		}), windowScopeFields...)
	} else if fromLayout {
		fields = layoutAsk(fields)
	}
	cmds := []tmux.Command{append(tmux.Command{"list-panes"}, append(slices.Clone(scope), "-F", tmux.Format(fields...))...)}
	if perWindow {
		cmds = append(cmds, windowsOf(scope))
	}
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return nil, nil, err
	}
	// Room for what is added to each row: the rest of paneFields, and the
	// edges deriveEdges computes.
	if rows, err = tmux.ParseRowsRoom(outs[0], fields, len(paneFields)+3-len(fields)); err != nil {
		return nil, nil, err
	}
	if perWindow {
		if wins, err = tmux.ParseRows(outs[1], windowRowFields); err != nil {
			return nil, nil, err
		}
		if c.testWindowRows != nil {
			c.testWindowRows(wins)
		}
	}
	return rows, wins, nil
}

// currentFromOS reports whether a listing with fields may read the current
// command and path from the OS: a local server, a platform that can, and
// fields that do not already ask tmux for them (a filter on them).
func (c *Call) currentFromOS(fields []string) bool {
	return c.host == "" && !c.noCurrentFromOS && foreground.CurrentSupported() &&
		!slices.Contains(fields, "pane_current_command") && !slices.Contains(fields, "pane_current_path")
}

// serverPIDHint is the pid of the tmux server on sock as last known: the
// control connection's, else the last listing's; 0 when unknown. It only
// chooses what to read early; the answer's #{pid} is what is trusted.
func (c *Call) serverPIDHint(sock tmux.Socket) int {
	if ider, ok := c.tmux.Runner.(interface {
		Identity(tmux.Socket) (tmux.ServerIdentity, bool)
	}); ok {
		if id, ok := ider.Identity(sock); ok {
			if pid, err := strconv.Atoi(id.PID); err == nil {
				return pid
			}
		}
	}
	if v, ok := c.pidHints.Load(sock.String()); ok {
		return v.(int)
	}
	return 0
}

// askCurrent fills the current command and path of rows from tmux: by pane
// id for a few, for the whole scope otherwise. A pane gone meanwhile keeps
// neither (its fields stay unset, reported as null).
func (c *Call) askCurrent(ctx context.Context, sock tmux.Socket, scope []string, rows []tmux.Row) error {
	fields := []string{"pane_id", "pane_current_command", "pane_current_path"}
	cmd := append(tmux.Command{"list-panes"}, scope...)
	if len(rows) <= currentFallbackMax && !slices.ContainsFunc(rows, func(r tmux.Row) bool {
		_, err := tmux.ParsePaneID(r["pane_id"])
		return err != nil
	}) {
		cmd = append(cmd, "-f", paneIDFilter(rows))
	}
	got, err := c.tmux.Rows(ctx, sock, cmd, fields)
	if err != nil {
		return err
	}
	byID := make(map[string]tmux.Row, len(got))
	for _, g := range got {
		byID[g["pane_id"]] = g
	}
	for _, r := range rows {
		if g, ok := byID[r["pane_id"]]; ok {
			r["pane_current_command"], r["pane_current_path"] = g["pane_current_command"], g["pane_current_path"]
		}
	}
	return nil
}

// paneIDFilter is a list-panes -f format true for the rows' panes only.
// The ids are checked pane ids ('%' and digits): nothing to escape.
func paneIDFilter(rows []tmux.Row) string {
	var b strings.Builder
	for i, r := range rows {
		if i < len(rows)-1 {
			b.WriteString("#{||:")
		}
		b.WriteString("#{==:#{pane_id}," + r["pane_id"] + "}")
		if i < len(rows)-1 {
			b.WriteString(",")
		}
	}
	b.WriteString(strings.Repeat("}", len(rows)-1))
	return b.String()
}
