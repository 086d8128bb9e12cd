package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneSpawnTools) }

type splitWindowArgs struct {
	PaneID *string `json:"pane_id" desc:"Pane to split; else the window's active pane."`
	pwWindowTarget
	Direction                 *string      `json:"direction" enum:"above,below,left,right" desc:"Default: below."`
	Size                      StrOrInt     `json:"size" desc:"'50%' or a number of cells."`
	StartDirectory            *string      `json:"start_directory" desc:"Existing directory; ~ expands."`
	Shell                     *string      `json:"shell" desc:"Command to run; omit for the default shell."`
	Environment               StringMapArg `json:"environment" desc:"Per-process (tmux -e); mapping or JSON string. Visible to ps: no secrets."`
	SuppressPersistentHistory bool         `json:"suppress_persistent_history" default:"false" desc:"Keep the shell's history off disk (HISTFILE='', fish private mode). Best effort."`
	SocketArgs
}

type respawnPaneArgs struct {
	PaneID                    string       `json:"pane_id" desc:"e.g. %1; no fallback."`
	Kill                      bool         `json:"kill" default:"true" desc:"Kill a running process first (-k); with false, one still running is an error."`
	Shell                     *string      `json:"shell" desc:"Omitted: the pane's original command."`
	StartDirectory            *string      `json:"start_directory" desc:"Existing directory; ~ expands."`
	Environment               StringMapArg `json:"environment" desc:"Per-process (tmux -e); mapping or JSON string. Visible to ps: no secrets."`
	SuppressPersistentHistory bool         `json:"suppress_persistent_history" default:"false" desc:"Keep the shell's history off disk (HISTFILE='', fish private mode). Best effort."`
	SocketArgs
}

type killPaneArgs struct {
	PaneID string `json:"pane_id" desc:"e.g. %1; no fallback."`
	SocketArgs
}

var pwSizeRe = lazyRegexp(`^[1-9][0-9]{0,4}%?$`)

// pwSize turns split_window's size into tmux's -l value.
func pwSize(s StrOrInt) (string, error) {
	raw := s.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", expectedf("size must be a string such as '50%%' or an integer")
	}
	var txt string
	switch x := v.(type) {
	case string:
		txt = strings.TrimSpace(x)
	case float64:
		txt = fmt.Sprint(int64(x))
		if float64(int64(x)) != x {
			txt = ""
		}
	}
	if !pwSizeRe().MatchString(txt) || (strings.HasSuffix(txt, "%") && atoi(strings.TrimSuffix(txt, "%")) > 100) {
		return "", expectedf("size must be a positive number of lines/columns or a percentage from 1%% to 100%% (e.g. '50%%')")
	}
	return txt, nil
}

// pwSpawnArgs validates what split_window and respawn_pane pass to the new
// process: start directory (-c, format-escaped because tmux expands it),
// environment (-e) and the shell command (after "--", which tmux does not
// expand). It returns the flags and the trailing positional arguments.
// A remote host's start directory is checked there last.
func (c *Call) pwSpawnArgs(ctx context.Context, startDir, shell *string, env StringMapArg, sph bool) (flags, tail []string, err error) {
	if err := pwNoNUL("start_directory", str(startDir)); err != nil {
		return nil, nil, err
	}
	if err := pwNoNUL("shell", str(shell)); err != nil {
		return nil, nil, err
	}
	dir, err := startDirectory(startDir, c.host != "")
	if err != nil {
		return nil, nil, err
	}
	envFlags, err := spawnEnv(env, sph)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkRemoteDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	if dir != "" {
		flags = append(flags, "-c", tmux.LiteralFormat(dir, false))
	}
	flags = append(flags, envFlags...)
	if sh := str(shell); sh != "" {
		tail = []string{"--", sh}
	}
	return flags, tail, nil
}

// pwGuardSelf refuses to kill or respawn the pane this process runs in
// (contract 2.4). It is conservative: when TMUX is set but TMUX_PANE is not,
// any pane on the caller's server could be ours, so it refuses too. Only
// then does it cost a round trip (to read the server's socket path).
func (c *Call) pwGuardSelf(ctx context.Context, sock tmux.Socket, id, verb string) error {
	cl := c.cfg.Caller
	if !cl.InTmux() || (cl.PaneID != "" && cl.PaneID != id) {
		return nil
	}
	outs, err := c.tmux.Run(ctx, sock, tmux.Command{"display-message", "-p", "#{socket_path}"})
	if err != nil {
		return err
	}
	if !c.callerOnServer(sock, strings.TrimSpace(string(outs[0]))) {
		return nil
	}
	if cl.PaneID == "" {
		return expectedf("Refusing to %s %s: this MCP server runs inside tmux on this server (TMUX is set) but TMUX_PANE is unset, so it cannot prove %s is not its own pane. Use a manual tmux command if intended.", verb, id, id)
	}
	return expectedf("Refusing to %s %s: it is the pane this MCP server runs in. Use a manual tmux command if intended.", verb, id)
}

func paneSpawnTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "split_window", Title: "Split tmux Window", Toolset: "window", Tier: config.Mutating, Preset: BSE,
			Description: "Split a pane (pane_id, else the target window's active pane); the new pane does not take focus. Returns its info and pane_id. Use create_window for a new window.",
		}, func(ctx context.Context, c *Call, a splitWindowArgs) (PaneInfo, error) {
			size, err := pwSize(a.Size)
			if err != nil {
				return PaneInfo{}, err
			}
			flags, tail, err := c.pwSpawnArgs(ctx, a.StartDirectory, a.Shell, a.Environment, a.SuppressPersistentHistory)
			if err != nil {
				return PaneInfo{}, err
			}
			sock := c.Socket(a.SocketArgs)
			var target, what, name string
			if id := str(a.PaneID); id != "" {
				pid, err := tmux.ParsePaneID(id)
				if err != nil {
					return PaneInfo{}, err
				}
				target, what, name = string(pid), "pane", id
			} else if target, what, name, err = c.pwWindow(ctx, sock, a.pwWindowTarget); err != nil {
				return PaneInfo{}, pwNotFound(err, what, name)
			}
			cmd := tmux.Command{"split-window", "-d", "-P", "-F", tmux.Format(paneFields...)}
			switch str(a.Direction) {
			case "above":
				cmd = append(cmd, "-v", "-b")
			case "below":
				cmd = append(cmd, "-v")
			case "left":
				cmd = append(cmd, "-h", "-b")
			case "right":
				cmd = append(cmd, "-h")
			}
			if size != "" {
				cmd = append(cmd, "-l", size)
			}
			cmd = append(append(append(cmd, flags...), "-t", target), tail...)
			outs, err := c.pwRunTarget(ctx, sock, what, name, cmd)
			if err != nil {
				return PaneInfo{}, err
			}
			p, err := c.pwParsePane(outs[0], target)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.pwStarted(ctx, sock, p), nil
		}),
		define(Tool{
			Name: "respawn_pane", Title: "Respawn Pane", Toolset: "pane", Tier: config.Mutating, Preset: BSE,
			Description: "Restart a pane's process in place, keeping its pane_id and layout (a wedged shell or REPL). Needs an exact pane_id; refuses this server's own pane. To remove the pane use kill_pane.",
		}, func(ctx context.Context, c *Call, a respawnPaneArgs) (PaneInfo, error) {
			pid, err := tmux.ParsePaneID(a.PaneID)
			if err != nil {
				return PaneInfo{}, err
			}
			id := string(pid)
			flags, tail, err := c.pwSpawnArgs(ctx, a.StartDirectory, a.Shell, a.Environment, a.SuppressPersistentHistory)
			if err != nil {
				return PaneInfo{}, err
			}
			sock := c.Socket(a.SocketArgs)
			if err := c.pwGuardSelf(ctx, sock, id, "respawn pane"); err != nil {
				return PaneInfo{}, err
			}
			cmd := tmux.Command{"respawn-pane"}
			if a.Kill {
				cmd = append(cmd, "-k")
			}
			cmd = append(append(append(cmd, flags...), "-t", id), tail...)
			p, err := c.pwActRead(ctx, sock, id, cmd)
			if err != nil {
				return PaneInfo{}, err
			}
			return c.pwStarted(ctx, sock, p), nil
		}),
		define(Tool{
			Name: "kill_pane", Title: "Kill Pane", Toolset: "pane", Tier: config.Destructive, Preset: DES,
			Description: "Kill a pane and its process, by exact pane_id; refuses the pane this server runs in. Prefer respawn_pane to restart a wedged shell and keep its id.",
		}, func(ctx context.Context, c *Call, a killPaneArgs) (Text, error) {
			pid, err := tmux.ParsePaneID(a.PaneID)
			if err != nil {
				return "", err
			}
			id := string(pid)
			sock := c.Socket(a.SocketArgs)
			if err := c.pwGuardSelf(ctx, sock, id, "kill pane"); err != nil {
				return "", err
			}
			if _, err := c.pwRun(ctx, sock, id, tmux.Command{"kill-pane", "-t", id}); err != nil {
				return "", err
			}
			return Text("Pane killed: " + id), nil
		}),
	}
}

// pwStartDelays are the waits before re-reading a pane whose new process
// had not started when tmux answered the spawn (see pwStarted). The whole
// schedule is under a tenth of a second, and costs nothing when the first
// read already saw the program.
var pwStartDelays = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond}

// pwStarted returns p as read again once the program split-window or
// respawn-pane started in it is running. tmux answers those commands right
// after forking: until the child has made the pane's terminal its own,
// changed to its directory and exec'd the program, pane_current_path is
// empty or tmux's own directory and pane_current_command is tmux's own name
// (the forked copy of the server). tmux reads the two fields one after the
// other, so a read taken while the child moves on can also mix the states
// (the program's name with tmux's directory). The reference reads the pane
// in a separate tmux invocation a few milliseconds later, so it mostly sees
// the program; ours reads in the same round trip, and when that read shows
// the child still starting, re-reads until two reads in a row agree on a
// started program (or the schedule ends: then the last read is returned as
// tmux reports it).
func (c *Call) pwStarted(ctx context.Context, sock tmux.Socket, p PaneInfo) PaneInfo {
	if !c.pwStarting(p) {
		return p
	}
	var prev *PaneInfo
	for _, d := range pwStartDelays {
		select {
		case <-ctx.Done():
			return p
		case <-time.After(d):
		}
		outs, err := c.tmux.Run(ctx, sock, pwReadCmd(p.PaneID))
		if err != nil {
			return p
		}
		q, err := c.pwParsePane(outs[0], p.PaneID)
		if err != nil {
			return p
		}
		if !c.pwStarting(q) && prev != nil && samePtr(prev.PaneCurrentPath, q.PaneCurrentPath) &&
			samePtr(prev.PaneCurrentCommand, q.PaneCurrentCommand) {
			return q
		}
		p, prev = q, &q
	}
	return p
}

func samePtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// pwStarting reports a pane whose spawned process has not exec'd yet: no
// current path, or tmux's own name as the current command.
func (c *Call) pwStarting(p PaneInfo) bool {
	if p.PaneCurrentPath == nil || *p.PaneCurrentPath == "" || p.PaneCurrentCommand == nil {
		return true
	}
	cmd := *p.PaneCurrentCommand
	return cmd == "tmux" || (c.cfg.TmuxBin != "" && cmd == filepath.Base(c.cfg.TmuxBin))
}
