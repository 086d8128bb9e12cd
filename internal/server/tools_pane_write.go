package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneWriteTools) }

// Helpers shared by the pane-changing tools (tools_pane_write*.go). They are
// prefixed pw so that they cannot collide with another group's helpers.

// pwMaxCommandBytes bounds the argv of one tmux command. The tmux client
// refuses a command sequence larger than about 16 KB ("command too long") and
// the kernel refuses a single argument over 128 KB, which would surface as an
// internal failure; checking first gives the agent a clear error.
const pwMaxCommandBytes = 15000

// pwReadCmd reads a pane's PaneInfo fields. It never validates the target
// (display-message prints empty fields for a missing pane), so it always
// runs after a command that does.
func pwReadCmd(target string) tmux.Command {
	return tmux.Command{"display-message", "-p", "-t", target, tmux.Format(paneFields...)}
}

// pwParsePane turns the output of pwReadCmd (or of -P -F with paneFields)
// into a PaneInfo.
func (c *Call) pwParsePane(out []byte, id string) (PaneInfo, error) {
	rows, err := tmux.ParseRows(out, paneFields)
	if err != nil {
		return PaneInfo{}, err
	}
	if len(rows) == 0 || rows[0]["pane_id"] == "" {
		return PaneInfo{}, &tmux.NotFoundError{What: "pane", Detail: id}
	}
	return c.paneInfo(rows[0]), nil
}

// pwRun runs commands that target pane id in one round trip; a missing pane
// becomes PaneNotFound.
func (c *Call) pwRun(ctx context.Context, sock tmux.Socket, id string, cmds ...tmux.Command) ([][]byte, error) {
	return c.pwRunTarget(ctx, sock, "pane", id, cmds...)
}

// pwActRead runs cmds on pane id and reads the pane afterwards, all in one
// round trip.
func (c *Call) pwActRead(ctx context.Context, sock tmux.Socket, id string, cmds ...tmux.Command) (PaneInfo, error) {
	outs, err := c.pwRun(ctx, sock, id, append(cmds, pwReadCmd(id))...)
	if err != nil {
		return PaneInfo{}, err
	}
	return c.pwParsePane(outs[len(outs)-1], id)
}

// pwNotFound is notFoundAs with the kind tmux names in "can't find <kind>"
// when it names one (a pane tool's target can fail at its session or
// window), so the hint names the right discovery tool.
func pwNotFound(err error, what, detail string) error {
	for _, k := range []string{"pane", "window", "session"} {
		if notFoundMentions(err, "can't find "+k) {
			what = k
			break
		}
	}
	return notFoundAs(err, what, detail)
}

// pwCheckSize refuses a command tmux could not take, before it is run.
func pwCheckSize(cmds ...tmux.Command) error {
	n := 0
	for _, cmd := range cmds {
		for _, a := range cmd {
			n += len(a) + 1
		}
	}
	if n > pwMaxCommandBytes {
		return expectedf("the arguments are too long for tmux (%d bytes; tmux accepts about %d bytes per command)", n, pwMaxCommandBytes)
	}
	return nil
}

// pwNoNUL refuses a NUL byte, which no tmux argument can carry.
func pwNoNUL(name, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return expectedf("%s must not contain NUL bytes", name)
	}
	return nil
}

// pwShellQuote quotes s as one POSIX sh word.
func pwShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pwWindowTarget is the reference's window target (WT).
type pwWindowTarget struct {
	WindowID    *string `json:"window_id"`
	WindowIndex *string `json:"window_index"`
	SessionName *string `json:"session_name"`
	SessionID   *string `json:"session_id"`
}

// pwWindow returns a tmux target for the window a WT names, following the
// reference's chain: window_id; else window_index within the session; else
// the session's first (lowest-numbered) window. The session is session_id,
// session_name, or the first session (which costs one round trip). It also
// returns the kind and name to report when tmux cannot find the target.
func (c *Call) pwWindow(ctx context.Context, sock tmux.Socket, w pwWindowTarget) (target, what, name string, err error) {
	if id := str(w.WindowID); id != "" {
		wid, err := tmux.ParseWindowID(id)
		return string(wid), "window", id, err
	}
	idx := str(w.WindowIndex)
	if idx != "" && !tmux.IsDigits(idx) {
		return "", "", "", &tmux.BadIDError{Kind: "window", Detail: "window_index must be a non-negative integer"}
	}
	st, err := c.sessTarget(ctx, sock, sessArgs{SessionName: w.SessionName, SessionID: w.SessionID})
	if err != nil {
		return "", "", "", err
	}
	what, name = "session", str(w.SessionID)+str(w.SessionName)
	if name == "" {
		name = st // the first session's id
	}
	base := sessPrefix(st) + ":"
	if idx != "" {
		return base + idx, "window", fmt.Sprintf("index %s in session %s", errarg.Bare(idx), errarg.Bare(name)), nil
	}
	return base + "{start}", what, name, nil
}

// Argument structs.

type selectPaneArgs struct {
	PaneID    *string `json:"pane_id" desc:"With direction, the pane to move from."`
	Direction *string `json:"direction" enum:"up,down,left,right,last,next,previous" doc:"Move to a neighbour instead of naming a pane."`
	pwWindowTarget
	SocketArgs
}

type resizePaneArgs struct {
	PaneTarget
	Height *int  `json:"height" desc:"Rows."`
	Width  *int  `json:"width" desc:"Columns."`
	Zoom   *bool `json:"zoom" desc:"true zooms, false unzooms; not with height/width."`
	SocketArgs
}

type swapPaneArgs struct {
	SourcePaneID string `json:"source_pane_id" doc:"Pane ID (e.g. '%1') to move."`
	TargetPaneID string `json:"target_pane_id" desc:"e.g. %2"`
	SocketArgs
}

type setPaneTitleArgs struct {
	Title string `json:"title" doc:"New pane title."`
	PaneTarget
	SocketArgs
}

type paneOnlyArgs struct {
	PaneTarget
	SocketArgs
}

type enterCopyModeArgs struct {
	PaneTarget
	ScrollUp *int `json:"scroll_up" doc:"Lines to scroll up after entering copy mode."`
	SocketArgs
}

func paneWriteTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "select_pane", Title: "Select Pane", Toolset: "pane", Tier: config.Mutating, Preset: MUT,
			Description: "Make a pane active in its window, by pane_id or direction within a window. Returns the active pane. For a window use select_window.",
		}, func(ctx context.Context, c *Call, a selectPaneArgs) (PaneInfo, error) {
			sock := c.Socket(a.SocketArgs)
			dir, pane := str(a.Direction), str(a.PaneID)
			if dir == "" && pane == "" {
				return PaneInfo{}, expectedf("select_pane needs pane_id or direction")
			}
			flag := map[string]string{"up": "-U", "down": "-D", "left": "-L", "right": "-R", "last": "-l"}[dir]
			step := map[string]string{"next": ".+", "previous": ".-"}[dir]
			if pane != "" {
				pid, err := tmux.ParsePaneID(pane)
				if err != nil {
					return PaneInfo{}, err
				}
				id := string(pid)
				cmds := []tmux.Command{{"select-pane", "-t", id}}
				if flag != "" {
					cmds = []tmux.Command{{"select-pane", flag, "-t", id}}
				}
				if step != "" {
					// next/previous from the given pane: select it, then step
					// within its window (tmux has no "pane after %N" target,
					// so the window id is looked up first).
					outs, err := c.pwRun(ctx, sock, id, tmux.Command{"display-message", "-p", "-t", id, "#{window_id}"}, tmux.Command{"list-panes", "-t", id, "-F", "#{pane_id}"})
					if err != nil {
						return PaneInfo{}, err
					}
					cmds = append(cmds, tmux.Command{"select-pane", "-t", strings.TrimSpace(string(outs[0])) + step})
				}
				// The window's active pane afterwards (list-panes -t %N
				// lists %N's window).
				cmds = append(cmds, tmux.Command{"list-panes", "-t", id, "-f", "#{pane_active}", "-F", tmux.Format(paneFields...)})
				outs, err := c.pwRun(ctx, sock, id, cmds...)
				if err != nil {
					return PaneInfo{}, err
				}
				return c.pwParsePane(outs[len(outs)-1], id)
			}
			win, what, name, err := c.pwWindow(ctx, sock, a.pwWindowTarget)
			if err != nil {
				return PaneInfo{}, pwNotFound(err, what, name)
			}
			cmd := tmux.Command{"select-pane", flag, "-t", win}
			if flag == "" {
				cmd = tmux.Command{"select-pane", "-t", win + step}
			}
			outs, err := c.pwRunTarget(ctx, sock, what, name, cmd, pwReadCmd(win))
			if err != nil {
				return PaneInfo{}, err
			}
			return c.pwParsePane(outs[1], win)
		}),
		define(Tool{
			Name: "resize_pane", Title: "Resize Pane", Toolset: "pane", Tier: config.Mutating, Preset: MUT,
			Description: "Resize a pane (height and/or width), or zoom/unzoom it (idempotent); zoom not with height or width. Use resize_window for the whole window.",
		}, func(ctx context.Context, c *Call, a resizePaneArgs) (PaneInfo, error) {
			if a.Zoom != nil && (a.Height != nil || a.Width != nil) {
				return PaneInfo{}, expectedf("zoom cannot be combined with height or width")
			}
			for name, v := range map[string]*int{"height": a.Height, "width": a.Width} {
				if v != nil && (*v < 1 || *v > 10000) {
					return PaneInfo{}, expectedf("%s must be between 1 and 10000", name)
				}
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return PaneInfo{}, err
			}
			cmd := tmux.Command{"resize-pane", "-t", id}
			switch {
			case a.Zoom != nil:
				// if-shell -F evaluates the format without a shell and runs
				// the toggle only when the zoom state differs.
				cond := "#{window_zoomed_flag}"
				if *a.Zoom {
					cond = "#{?window_zoomed_flag,0,1}"
				}
				cmd = tmux.Command{"if-shell", "-F", "-t", id, cond, "resize-pane -Z -t " + id}
			default:
				if a.Width != nil {
					cmd = append(cmd, "-x", fmt.Sprint(*a.Width))
				}
				if a.Height != nil {
					cmd = append(cmd, "-y", fmt.Sprint(*a.Height))
				}
			}
			return c.pwActRead(ctx, sock, id, cmd)
		}),
		define(Tool{
			Name: "swap_pane", Title: "Swap Pane", Toolset: "pane", Tier: config.Mutating, Preset: CRE,
			Description: "Swap two panes' positions (exact ids, any windows). Returns the source pane. For windows use move_window.",
		}, func(ctx context.Context, c *Call, a swapPaneArgs) (PaneInfo, error) {
			src, err := tmux.ParsePaneID(a.SourcePaneID)
			if err != nil {
				return PaneInfo{}, err
			}
			dst, err := tmux.ParsePaneID(a.TargetPaneID)
			if err != nil {
				return PaneInfo{}, err
			}
			sock := c.Socket(a.SocketArgs)
			// list-panes -t fails on a missing pane, so each id is proven to
			// exist (and named in the error) before the swap.
			outs, err := c.tmux.Run(ctx, sock,
				tmux.Command{"list-panes", "-t", string(src), "-F", "#{pane_id}"},
				tmux.Command{"list-panes", "-t", string(dst), "-F", "#{pane_id}"},
				tmux.Command{"swap-pane", "-s", string(src), "-t", string(dst)},
				pwReadCmd(string(src)))
			if err != nil {
				missing := string(src)
				if len(outs) == 1 {
					missing = string(dst)
				}
				return PaneInfo{}, pwNotFound(err, "pane", missing)
			}
			return c.pwParsePane(outs[3], string(src))
		}),
		define(Tool{
			Name: "set_pane_title", Title: "Set Pane Title", Toolset: "pane", Tier: config.Mutating, Preset: MUT,
			Description: "Set a pane's title (shown by list_panes and pane borders), stored literally.",
		}, func(ctx context.Context, c *Call, a setPaneTitleArgs) (PaneInfo, error) {
			if err := pwNoNUL("title", a.Title); err != nil {
				return PaneInfo{}, err
			}
			for _, r := range a.Title {
				if r < 0x20 || r == 0x7f {
					// tmux silently ignores such a title; say so instead.
					return PaneInfo{}, expectedf("title must not contain control characters (newline, tab, escape...)")
				}
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.pwActRead(ctx, sock, id, tmux.Command{"select-pane", "-t", id, "-T", tmux.LiteralFormat(a.Title, false)})
		}),
		define(Tool{
			Name: "clear_pane", Title: "Clear Pane", Toolset: "pane", Tier: config.Mutating, Preset: MDS,
			Description: "Reset a pane's terminal and erase its scrollback for good. respawn_pane restarts its process.",
		}, func(ctx context.Context, c *Call, a paneOnlyArgs) (Text, error) {
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return "", err
			}
			if _, err := c.pwRun(ctx, sock, id, tmux.Command{"send-keys", "-R", "-t", id}, tmux.Command{"clear-history", "-t", id}); err != nil {
				return "", err
			}
			return Text("Pane cleared: " + id), nil
		}),
		define(Tool{
			Name: "enter_copy_mode", Title: "Enter Copy Mode", Toolset: "pane", Tier: config.Mutating, Preset: CRE,
			Description: "Put a pane into copy mode to scroll its history, optionally up scroll_up lines. exit_copy_mode leaves it.",
		}, func(ctx context.Context, c *Call, a enterCopyModeArgs) (PaneInfo, error) {
			if a.ScrollUp != nil && *a.ScrollUp < 0 {
				return PaneInfo{}, expectedf("scroll_up must not be negative")
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return PaneInfo{}, err
			}
			cmds := []tmux.Command{{"copy-mode", "-t", id}}
			switch {
			case a.ScrollUp == nil || *a.ScrollUp == 0:
			case *a.ScrollUp <= scrollStepMax:
				cmds = append(cmds, tmux.Command{"send-keys", "-X", "-N", strconv.Itoa(*a.ScrollUp), "-t", id, "scroll-up"})
			default:
				line, err := c.copyModeScrollTarget(ctx, sock, id, *a.ScrollUp)
				if err != nil {
					return PaneInfo{}, err
				}
				cmds = []tmux.Command{{"send-keys", "-X", "-t", id, "goto-line", strconv.Itoa(line)}}
			}
			return c.pwActRead(ctx, sock, id, cmds...)
		}),
		define(Tool{
			Name: "exit_copy_mode", Title: "Exit Copy Mode", Toolset: "pane", Tier: config.Mutating, Preset: MUT,
			Description: "Leave copy mode (see enter_copy_mode); a pane in no mode is left as it is.",
		}, func(ctx context.Context, c *Call, a paneOnlyArgs) (PaneInfo, error) {
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.pwActRead(ctx, sock, id, tmux.Command{"if-shell", "-F", "-t", id, "#{pane_in_mode}", "send-keys -X -t " + id + " cancel"})
		}),
	}
}

// pwRunTarget runs commands whose first one validates a window or session
// target, naming that target when tmux cannot find it.
func (c *Call) pwRunTarget(ctx context.Context, sock tmux.Socket, what, name string, cmds ...tmux.Command) ([][]byte, error) {
	if err := pwCheckSize(cmds...); err != nil {
		return nil, err
	}
	outs, err := c.tmux.Run(ctx, sock, cmds...)
	if err != nil {
		return nil, pwNotFound(err, what, name)
	}
	return outs, nil
}

// scrollStepMax is the largest scroll_up sent to tmux as a repeat count.
// tmux 3.3a's copy mode scrolls one line per repeat and keeps repeating past
// the top of the history (about 10 µs a line), so a count like 2^31 holds
// the whole tmux server for hours. Beyond this count the scroll becomes an
// absolute goto-line, whose cost does not depend on the distance.
const scrollStepMax = 1000

// copyModeScrollTarget enters copy mode on pane id and returns the line
// (scroll position) that scrolling up n more lines reaches: tmux clamps a
// scroll at the top of the history, and so does this.
func (c *Call) copyModeScrollTarget(ctx context.Context, sock tmux.Socket, id string, n int) (int, error) {
	outs, err := c.pwRun(ctx, sock, id, tmux.Command{"copy-mode", "-t", id},
		tmux.Command{"display-message", "-p", "-t", id, "#{scroll_position} #{history_size}"})
	if err != nil {
		return 0, err
	}
	var pos, hsize int
	if _, err := fmt.Sscan(string(outs[1]), &pos, &hsize); err != nil {
		return 0, fmt.Errorf("reading the scroll position of %s: %w", id, err)
	}
	if n >= hsize-pos {
		return hsize, nil
	}
	return pos + n, nil
}
