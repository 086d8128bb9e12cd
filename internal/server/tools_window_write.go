package server

import (
	"context"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, windowWriteTools) }

// winArgs is the reference's window target (WT): window_id wins; otherwise
// the session (session_id, then session_name, then the first session) and
// window_index within it, else that session's first window.
type winArgs struct {
	WindowID    *string `json:"window_id"`
	WindowIndex *string `json:"window_index"`
	sessArgs
}

type createWindowArgs struct {
	sessArgs
	WindowName     *string      `json:"window_name" doc:"Name for the new window."`
	StartDirectory *string      `json:"start_directory" desc:"Existing directory; ~ expands."`
	Attach         bool         `json:"attach" default:"false" desc:"Make it the current window."`
	Direction      *string      `json:"direction" enum:"before,after" desc:"Next to the current window, not at the next free index."`
	Environment    StringMapArg `json:"environment" desc:"Per-process (tmux -e); mapping or JSON string. Visible to ps: no secrets."`
	SocketArgs
	SuppressPersistentHistory bool `json:"suppress_persistent_history" default:"false" desc:"Keep the shell's history off disk (HISTFILE='', fish private mode). Best effort."`
}

type renameWindowArgs struct {
	NewName string `json:"new_name" doc:"New window name."`
	winArgs
	SocketArgs
}

type selectWindowArgs struct {
	WindowID    *string `json:"window_id"`
	WindowIndex *string `json:"window_index"`
	Direction   *string `json:"direction" enum:"next,previous,last" desc:"Instead of an id or index."`
	sessArgs
	SocketArgs
}

type selectLayoutArgs struct {
	Layout string `json:"layout" desc:"A preset (even-horizontal, main-vertical-mirrored, tiled...) or a layout string."`
	winArgs
	SocketArgs
}

type resizeWindowArgs struct {
	winArgs
	Height *int `json:"height" desc:"Rows."`
	Width  *int `json:"width" desc:"Columns."`
	SocketArgs
}

type moveWindowArgs struct {
	winArgs
	DestinationIndex   string  `json:"destination_index" default:"\"\"" desc:"Empty: the next free index."`
	DestinationSession *string `json:"destination_session" desc:"Name or id; omitted: its own session."`
	SocketArgs
}

type killWindowArgs struct {
	WindowID string `json:"window_id" desc:"e.g. @1; no fallback."`
	SocketArgs
}

func windowWriteTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "create_window", Title: "Create tmux Window", Toolset: "session", Tier: config.Mutating, Preset: CRE,
			Description: "Create a window in a session (the first session when none is given) and return it. Use split_window for a new pane in a window, create_session for a new session.",
		}, createWindow),
		define(Tool{
			Name: "rename_window", Title: "Rename tmux Window", Toolset: "window", Tier: config.Mutating, Preset: MUT,
			Description: "Rename a window and return it. Target by window_id, or window_index in a session; else its first window. For a session use rename_session.",
		}, renameWindow),
		define(Tool{
			Name: "select_window", Title: "Select tmux Window", Toolset: "session", Tier: config.Mutating, Preset: MUT,
			Description: "Make a window the current one of its session, by window_id, window_index or direction, and return it. For a pane use select_pane.",
		}, selectWindow),
		define(Tool{
			Name: "select_layout", Title: "Select tmux Layout", Toolset: "window", Tier: config.Mutating, Preset: MUT,
			Description: "Arrange a window's panes with a preset or custom layout and return the window. resize_pane sizes one pane.",
		}, selectLayout),
		define(Tool{
			Name: "resize_window", Title: "Resize tmux Window", Toolset: "window", Tier: config.Mutating, Preset: MUT,
			Description: "Resize a window (height and/or width) and return it. Use resize_pane to change one pane.",
		}, resizeWindow),
		define(Tool{
			Name: "move_window", Title: "Move tmux Window", Toolset: "window", Tier: config.Mutating, Preset: MUT,
			Description: "Move a window to another index and/or session; returns it after the move. For panes use swap_pane.",
		}, moveWindow),
		define(Tool{
			Name: "kill_window", Title: "Kill tmux Window", Toolset: "window", Tier: config.Destructive, Preset: DES,
			Description: "Kill a window and all its panes, by exact window_id. Refuses the window this server runs in. To end one pane use kill_pane.",
		}, killWindow),
	}
}

func createWindow(ctx context.Context, c *Call, a createWindowArgs) (WindowInfo, error) {
	env, err := spawnEnv(a.Environment, a.SuppressPersistentHistory)
	if err != nil {
		return WindowInfo{}, err
	}
	dir, err := startDirectory(a.StartDirectory, c.host != "")
	if err != nil {
		return WindowInfo{}, err
	}
	if err := c.checkRemoteDir(ctx, dir); err != nil {
		return WindowInfo{}, err
	}
	sock := c.Socket(a.SocketArgs)
	st, err := c.sessTarget(ctx, sock, a.sessArgs)
	if err != nil {
		return WindowInfo{}, err
	}
	cmd := tmux.Command{"new-window", "-P", "-F", tmux.Format(windowFields...)}
	if !a.Attach {
		cmd = append(cmd, "-d")
	}
	switch str(a.Direction) {
	case "before":
		cmd = append(cmd, "-b")
	case "after":
		cmd = append(cmd, "-a")
	}
	if wn := str(a.WindowName); wn != "" {
		cmd = append(cmd, "-n", tmux.LiteralFormat(wn, false))
	}
	if dir != "" {
		cmd = append(cmd, "-c", tmux.LiteralFormat(dir, false))
	}
	cmd = append(cmd, env...)
	// "$N:" or "=name:": the session's current window for -a/-b, the next
	// free index otherwise.
	cmd = append(cmd, "-t", sessPrefix(st)+":")
	outs, err := c.tmux.Run(ctx, sock, cmd)
	if err != nil {
		return WindowInfo{}, sessNotFound(err, a.sessArgs)
	}
	return parseWindow(outs[0])
}

func renameWindow(ctx context.Context, c *Call, a renameWindowArgs) (WindowInfo, error) {
	return c.windowAction(ctx, c.Socket(a.SocketArgs), a.winArgs, func(t string) tmux.Command {
		return tmux.Command{"rename-window", "-t", t, "--", tmux.LiteralFormat(a.NewName, false)}
	})
}

func selectLayout(ctx context.Context, c *Call, a selectLayoutArgs) (WindowInfo, error) {
	if _, err := checkLayout(a.Layout); err != nil {
		return WindowInfo{}, err
	}
	return c.windowAction(ctx, c.Socket(a.SocketArgs), a.winArgs, func(t string) tmux.Command {
		return tmux.Command{"select-layout", "-t", t, "--", a.Layout}
	})
}

func resizeWindow(ctx context.Context, c *Call, a resizeWindowArgs) (WindowInfo, error) {
	if a.Height == nil && a.Width == nil {
		return WindowInfo{}, expectedf("resize_window needs height, width or both")
	}
	var flags []string
	for _, d := range []struct {
		flag, arg string
		v         *int
	}{{"-x", "width", a.Width}, {"-y", "height", a.Height}} {
		if d.v == nil {
			continue
		}
		if *d.v < 1 || *d.v > 10000 {
			return WindowInfo{}, expectedf("%s must be between 1 and 10000", d.arg)
		}
		flags = append(flags, d.flag, strconv.Itoa(*d.v))
	}
	return c.windowAction(ctx, c.Socket(a.SocketArgs), a.winArgs, func(t string) tmux.Command {
		return append(tmux.Command{"resize-window", "-t", t}, flags...)
	})
}

func selectWindow(ctx context.Context, c *Call, a selectWindowArgs) (WindowInfo, error) {
	sock := c.Socket(a.SocketArgs)
	switch {
	case str(a.WindowID) != "" || str(a.WindowIndex) != "":
		return c.windowAction(ctx, sock, winArgs{WindowID: a.WindowID, WindowIndex: a.WindowIndex, sessArgs: a.sessArgs}, func(t string) tmux.Command {
			return tmux.Command{"select-window", "-t", t}
		})
	case str(a.Direction) != "":
		st, err := c.sessTarget(ctx, sock, a.sessArgs)
		if err != nil {
			return WindowInfo{}, err
		}
		verb := map[string]string{"next": "next-window", "previous": "previous-window", "last": "last-window"}[*a.Direction]
		// The session target "X:" names its current window, which is now
		// the selected one.
		cur := sessPrefix(st) + ":"
		outs, err := c.tmux.Run(ctx, sock,
			tmux.Command{verb, "-t", cur},
			tmux.Command{"display-message", "-p", "-t", cur, tmux.Format(windowFields...)})
		if err != nil {
			return WindowInfo{}, sessNotFound(err, a.sessArgs)
		}
		return parseWindow(outs[1])
	}
	return WindowInfo{}, expectedf("select_window needs window_id, window_index or direction")
}

func moveWindow(ctx context.Context, c *Call, a moveWindowArgs) (WindowInfo, error) {
	idx := a.DestinationIndex
	if idx != "" && !tmux.IsDigits(idx) {
		return WindowInfo{}, expectedf("destination_index must be a non-negative integer or empty (next free index)")
	}
	var dst string
	if ds := str(a.DestinationSession); ds != "" {
		var err error
		if strings.HasPrefix(ds, "$") {
			dst, err = tmux.SessionTarget(ds, "")
		} else {
			dst, err = tmux.SessionTarget("", ds)
		}
		if err != nil {
			return WindowInfo{}, err
		}
	}
	sock := c.Socket(a.SocketArgs)
	src := str(a.WindowID)
	if src != "" {
		if _, err := tmux.ParseWindowID(src); err != nil {
			return WindowInfo{}, err
		}
	}
	if src == "" || dst == "" {
		// One lookup for the window's id (the re-read after the move needs
		// it) and its session (the default destination).
		t, err := c.winTarget(ctx, sock, a.winArgs)
		if err != nil {
			return WindowInfo{}, err
		}
		fields := []string{"window_id", "session_id"}
		rows, err := c.tmux.Rows(ctx, sock, tmux.Command{"list-panes", "-t", t}, fields)
		if err != nil {
			return WindowInfo{}, winNotFound(err, a.winArgs)
		}
		if len(rows) == 0 {
			return WindowInfo{}, winNotFound(&tmux.NotFoundError{What: "window", Detail: t}, a.winArgs)
		}
		src = rows[0]["window_id"]
		if dst == "" {
			dst = rows[0]["session_id"]
		}
	}
	outs, err := c.tmux.Run(ctx, sock,
		tmux.Command{"move-window", "-s", src, "-t", sessPrefix(dst) + ":" + idx},
		tmux.Command{"display-message", "-p", "-t", src, tmux.Format(windowFields...)})
	if err != nil {
		if notFoundMentions(err, "session") {
			return WindowInfo{}, &tmux.NotFoundError{What: "session", Detail: errarg.Bare(str(a.DestinationSession))}
		}
		return WindowInfo{}, notFoundAs(err, "window", src)
	}
	return parseWindow(outs[1])
}

func killWindow(ctx context.Context, c *Call, a killWindowArgs) (Text, error) {
	wid, err := tmux.ParseWindowID(a.WindowID)
	if err != nil {
		return "", err
	}
	sock := c.Socket(a.SocketArgs)
	spot, _, err := c.locateCaller(ctx, sock)
	if err != nil {
		return "", err
	}
	if spot.holds("window_id", string(wid)) {
		return "", expectedf("Refusing to kill window %s: it contains the pane this MCP server runs in (or that cannot be ruled out). Use a manual tmux command if intended.", wid)
	}
	if _, err := c.tmux.Run(ctx, sock, tmux.Command{"kill-window", "-t", string(wid)}); err != nil {
		return "", notFoundAs(err, "window", string(wid))
	}
	return Text("Window killed: " + string(wid)), nil
}

// windowAction resolves a window target, runs the action on it and re-reads
// the window, the action and the re-read in one round trip (the action
// fails on a missing target; display-message alone would not).
func (c *Call) windowAction(ctx context.Context, sock tmux.Socket, w winArgs, action func(target string) tmux.Command) (WindowInfo, error) {
	t, err := c.winTarget(ctx, sock, w)
	if err != nil {
		return WindowInfo{}, err
	}
	outs, err := c.tmux.Run(ctx, sock, action(t), tmux.Command{"display-message", "-p", "-t", t, tmux.Format(windowFields...)})
	if err != nil {
		return WindowInfo{}, winNotFound(err, w)
	}
	return parseWindow(outs[1])
}

// winTarget turns a window target into a tmux target: "@N", "<session>:<index>"
// or "<session>:^" (the session's lowest-numbered window, which is the first
// one tmux lists). Only the first-session fallback costs a round trip.
func (c *Call) winTarget(ctx context.Context, sock tmux.Socket, w winArgs) (string, error) {
	if id := str(w.WindowID); id != "" {
		wid, err := tmux.ParseWindowID(id)
		return string(wid), err
	}
	idx := str(w.WindowIndex)
	if idx != "" && !tmux.IsDigits(idx) {
		return "", &tmux.BadIDError{Kind: "window", Detail: "window_index must be a non-negative integer"}
	}
	st, err := c.sessTarget(ctx, sock, w.sessArgs)
	if err != nil {
		return "", err
	}
	if idx == "" {
		idx = "^"
	}
	return sessPrefix(st) + ":" + idx, nil
}

// winNotFound names what the agent asked for when tmux could not find it:
// the session when that part failed, else the window.
func winNotFound(err error, w winArgs) error {
	if notFoundMentions(err, "session") {
		return sessNotFound(err, w.sessArgs)
	}
	name := str(w.WindowID)
	if name == "" {
		sess := sessionLabel(w.SessionID, w.SessionName)
		if sess == "" {
			sess = "(first session)"
		}
		if i := str(w.WindowIndex); i != "" {
			name = "index " + errarg.Bare(i) + " in session " + sess
		} else {
			name = "first window of session " + sess
		}
	}
	return notFoundAs(err, "window", name)
}

// sessPrefix strips the trailing ':' of a session target so a window part
// can follow.
func sessPrefix(st string) string { return strings.TrimSuffix(st, ":") }

// builtinLayouts are tmux's preset layouts.
var builtinLayouts = map[string]bool{
	"even-horizontal": true, "even-vertical": true, "main-horizontal": true, "main-horizontal-mirrored": true,
	"main-vertical": true, "main-vertical-mirrored": true, "tiled": true,
}

// checkLayout admits a built-in layout name, or a custom layout string
// that is well formed, carries the right checksum and is geometrically
// consistent (children tile their parent exactly), and nothing else: the
// tmux 3.3a server crashes, taking every session with it, on a select-layout
// argument that does not start with a hex digit, and on custom layouts whose
// cells do not add up. It returns the number of panes a custom layout
// describes (0 for a built-in name).
func checkLayout(l string) (int, error) {
	if builtinLayouts[l] {
		return 0, nil
	}
	bad := expectedf("invalid layout: use one of even-horizontal, even-vertical, main-horizontal, main-horizontal-mirrored, main-vertical, main-vertical-mirrored, tiled, or a custom layout string as tmux prints it in window_layout")
	if len(l) < 6 || len(l) > 16384 || l[4] != ',' {
		return 0, bad
	}
	sum, err := strconv.ParseUint(l[:4], 16, 16)
	if err != nil || uint16(sum) != layoutChecksum(l[5:]) {
		return 0, bad
	}
	p := &layoutParser{s: l[5:]}
	root, ok := p.cell(0)
	if !ok || p.i != len(p.s) || root.x != 0 || root.y != 0 || !root.consistent() {
		return 0, bad
	}
	return root.leaves(), nil
}

// layoutChecksum is tmux's layout_checksum.
func layoutChecksum(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c = (c >> 1) + ((c & 1) << 15)
		c += uint16(s[i])
	}
	return c
}

// layoutCell is one cell of a parsed custom layout.
type layoutCell struct {
	w, h, x, y int
	kind       byte // 0 leaf, '{' left-right, '[' top-bottom
	kids       []*layoutCell
	pane       int // a leaf's pane id number (%N); -1 when it has none
}

// consistent reports whether every cell is between 1 and 10000 cells wide
// and high and its children tile it exactly, one-cell borders between them.
func (c *layoutCell) consistent() bool {
	if c.w < 1 || c.h < 1 || c.w > 10000 || c.h > 10000 {
		return false
	}
	if c.kind == 0 {
		return true
	}
	if len(c.kids) < 2 {
		return false
	}
	x, y := c.x, c.y
	for _, k := range c.kids {
		if !k.consistent() || k.x != x || k.y != y {
			return false
		}
		if c.kind == '{' {
			if k.h != c.h {
				return false
			}
			x += k.w + 1
		} else {
			if k.w != c.w {
				return false
			}
			y += k.h + 1
		}
	}
	if c.kind == '{' {
		return x == c.x+c.w+1
	}
	return y == c.y+c.h+1
}

func (c *layoutCell) leaves() int {
	if c.kind == 0 {
		return 1
	}
	n := 0
	for _, k := range c.kids {
		n += k.leaves()
	}
	return n
}

// layoutParser reads tmux's layout grammar:
//
//	cell := W "x" H "," X "," Y ( [ "," pane ] | "{" cells "}" | "[" cells "]" )
//	cells := cell ( "," cell )*
type layoutParser struct {
	s string
	i int
}

func (p *layoutParser) num() (int, bool) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i == start || p.i-start > 5 {
		return 0, false
	}
	n, _ := strconv.Atoi(p.s[start:p.i])
	return n, true
}

func (p *layoutParser) lit(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *layoutParser) cell(depth int) (*layoutCell, bool) {
	c := &layoutCell{pane: -1}
	var ok1, ok2, ok3, ok4 bool
	if depth > 32 {
		return nil, false
	}
	if c.w, ok1 = p.num(); !ok1 || !p.lit('x') {
		return nil, false
	}
	if c.h, ok2 = p.num(); !ok2 || !p.lit(',') {
		return nil, false
	}
	if c.x, ok3 = p.num(); !ok3 || !p.lit(',') {
		return nil, false
	}
	if c.y, ok4 = p.num(); !ok4 {
		return nil, false
	}
	var end byte
	switch {
	case p.lit('{'):
		c.kind, end = '{', '}'
	case p.lit('['):
		c.kind, end = '[', ']'
	case p.lit(','):
		save := p.i - 1
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start || p.i-start > 9 {
			return nil, false
		}
		if p.lit('x') { // no pane id: that was the next cell's width
			p.i = save
		} else {
			c.pane, _ = strconv.Atoi(p.s[start:p.i])
		}
		return c, true
	default:
		// A leaf without a pane id (older tmux) ends here.
		return c, p.i == len(p.s) || p.s[p.i] == '}' || p.s[p.i] == ']'
	}
	for {
		k, ok := p.cell(depth + 1)
		if !ok {
			return nil, false
		}
		c.kids = append(c.kids, k)
		if p.lit(end) {
			return c, true
		}
		if !p.lit(',') {
			return nil, false
		}
	}
}

// parseWindow reads the WindowInfo of a display-message or -P -F answer
// with windowFields.
func parseWindow(out []byte) (WindowInfo, error) {
	r, err := oneRow(out, windowFields, "window")
	if err != nil {
		return WindowInfo{}, err
	}
	return windowInfo(r), nil
}
