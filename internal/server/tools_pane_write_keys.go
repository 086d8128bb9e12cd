package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, paneKeysTools) }

const (
	// pwKeysChunk and pwKeysPerRun keep each tmux client command under
	// tmux's ~16 KB limit: longer keys are typed as several literal chunks.
	pwKeysChunk  = 4500
	pwKeysPerRun = 3
	// pwMaxKeys bounds one send_keys call; larger text belongs in a buffer.
	pwMaxKeys = 1 << 20
)

type sendKeysArgs struct {
	Keys string `json:"keys" desc:"Text, or one key name such as C-c or Enter."`
	PaneTarget
	Enter           bool `json:"enter" default:"true" doc:"Press Enter after the keys."`
	Literal         bool `json:"literal" default:"false" desc:"Type a key name as text."`
	SuppressHistory bool `json:"suppress_history" default:"false" desc:"Prepend a space (ignorespace keeps it out of history)."`
	SocketArgs
}

// sendKeysOp is one operation of send_keys_batch. Its schema is closed
// (extra keys are forbidden) and it fills its own defaults, since nested
// objects get none from the argument validator.
type sendKeysOp struct {
	Keys            string  `json:"keys" desc:"Text or one key name."`
	PaneID          *string `json:"pane_id" doc:"Pane ID (e.g. '%1')."`
	SessionName     *string `json:"session_name" doc:"Session name, used when pane_id is not given."`
	SessionID       *string `json:"session_id" doc:"Session ID, used when pane_id is not given."`
	WindowID        *string `json:"window_id" doc:"Window ID, used when pane_id is not given."`
	Enter           bool    `json:"enter" default:"true" doc:"Press Enter after the keys."`
	Literal         bool    `json:"literal" default:"false" doc:"Type keys as literal text."`
	SuppressHistory bool    `json:"suppress_history" default:"false" desc:"Prepend one space."`
}

func (sendKeysOp) jsonSchema() map[string]any {
	s, err := objectSchema(reflect.TypeFor[sendKeysOp](), true)
	if err != nil {
		panic(err)
	}
	return s
}

func (o *sendKeysOp) UnmarshalJSON(b []byte) error {
	type plain sendKeysOp
	p := plain{Enter: true}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*o = sendKeysOp(p)
	return nil
}

type sendKeysBatchArgs struct {
	Operations []sendKeysOp `json:"operations" desc:"Run in order, each to its own target."`
	OnError    string       `json:"on_error" default:"\"stop\"" enum:"stop,continue" doc:"stop after the first failing operation, or continue with the rest."`
	Timeout    *float64     `json:"timeout" desc:"Seconds (> 0) for the whole batch."`
	SocketArgs
}

// SendKeysOpResult is one row of SendKeysBatchResult.
type SendKeysOpResult struct {
	Index          int     `json:"index" desc:"Position in operations"`
	PaneID         *string `json:"pane_id" desc:"Pane the keys went to (null if the target did not resolve)"`
	Success        bool    `json:"success" desc:"Whether the keys were sent"`
	Error          *string `json:"error" desc:"Why it failed, with a recovery hint"`
	ElapsedSeconds float64 `json:"elapsed_seconds" desc:"Time spent on this operation"`
}

// SendKeysBatchResult is send_keys_batch's result.
type SendKeysBatchResult struct {
	Results   []SendKeysOpResult `json:"results" desc:"One row per operation that ran"`
	Succeeded int                `json:"succeeded" desc:"Operations that succeeded"`
	Failed    int                `json:"failed" desc:"Operations that failed"`
	StoppedAt *int               `json:"stopped_at" desc:"Index of the failing operation when on_error=stop ended the batch"`
}

type pipePaneArgs struct {
	PaneTarget
	OutputPath *string `json:"output_path" desc:"File (relative to the server's cwd); omit to stop piping."`
	Append     bool    `json:"append" default:"true" desc:"false truncates the file."`
	SocketArgs
}

// pwSendKeys types keys into pane id: the keys are one argv element after
// "--" (so a leading '-' is not a flag, and tmux never parses them as
// commands), with Enter in the same round trip. Text longer than one tmux
// command can carry is typed as literal chunks, split on character
// boundaries (such a string can never be a key name, so this is what tmux
// would type anyway).
func (c *Call) pwSendKeys(ctx context.Context, sock tmux.Socket, id, keys string, enter, literal, suppress bool) error {
	if err := pwCheckKeys(keys); err != nil {
		return err
	}
	cmds := pwKeyCommands(id, keys, enter, literal, suppress)
	// Keys wait while a run_command here has typed its wrapper and not yet
	// started (holdInput), and the hold covers every chunk: a wrapper typed
	// between two chunks would be broken by the rest of the keys.
	release, err := c.holdInput(ctx, sock, id)
	if err != nil {
		return err
	}
	defer release()
	typed := c.recordTyping(sock, id, typedBytes(keys, enter, literal, suppress), false)
	if err := c.pwRunChunks(ctx, sock, id, cmds); err != nil {
		typed(err)
		return err
	}
	return nil
}

// pwCheckKeys refuses keys send_keys (and send_and_wait) cannot type.
func pwCheckKeys(keys string) error {
	if err := pwNoNUL("keys", keys); err != nil {
		return expectedf("keys must not contain NUL bytes; send the key name C-@ to type a NUL")
	}
	if len(keys) > pwMaxKeys {
		return expectedf("keys is too long (%d bytes; at most %d): load large text into a buffer and paste it instead", len(keys), pwMaxKeys)
	}
	return nil
}

// pwRunChunks runs the key commands for pane id pwKeysPerRun at a time,
// each run one tmux client command under its size limit.
func (c *Call) pwRunChunks(ctx context.Context, sock tmux.Socket, id string, cmds []tmux.Command) error {
	for len(cmds) > 0 {
		n := min(pwKeysPerRun, len(cmds))
		if _, err := c.pwRun(ctx, sock, id, cmds[:n]...); err != nil {
			return err
		}
		cmds = cmds[n:]
	}
	return nil
}

// pwKeyCommands are the tmux commands that type keys into pane id, as
// send_keys types them (send_and_wait types the same).
func pwKeyCommands(id, keys string, enter, literal, suppress bool) []tmux.Command {
	if suppress {
		keys = " " + keys
	}
	var cmds []tmux.Command
	if len(keys) <= pwKeysChunk {
		cmd := tmux.Command{"send-keys", "-t", id}
		if literal {
			cmd = append(cmd, "-l")
		}
		cmds = append(cmds, append(cmd, "--", keys))
	} else {
		for rest := keys; rest != ""; {
			n := min(pwKeysChunk, len(rest))
			for n < len(rest) && n > 0 && !utf8.RuneStart(rest[n]) {
				n--
			}
			cmds = append(cmds, tmux.Command{"send-keys", "-t", id, "-l", "--", rest[:n]})
			rest = rest[n:]
		}
	}
	if enter {
		cmds = append(cmds, tmux.Command{"send-keys", "-t", id, "Enter"})
	}
	return cmds
}

func paneKeysTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "send_keys", Title: "Send Keys", Toolset: "pane", Tier: config.Mutating, Preset: SHL,
			Description: "Type text or one key name (e.g. 'C-c') into a pane, then Enter unless enter=false. Does not wait or read output: use run_command for a shell command, send_and_wait for a REPL or prompt, or wait_for_text/capture_pane after.",
		}, func(ctx context.Context, c *Call, a sendKeysArgs) (Text, error) {
			sock := c.Socket(a.SocketArgs)
			if err := pwNoNUL("keys", a.Keys); err != nil {
				return "", expectedf("keys must not contain NUL bytes; send the key name C-@ to type a NUL")
			}
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return "", err
			}
			if err := c.pwSendKeys(ctx, sock, id, a.Keys, a.Enter, a.Literal, a.SuppressHistory); err != nil {
				return "", err
			}
			return Text("Keys sent to pane " + id), nil
		}),
		define(Tool{
			Name: "send_keys_batch", Title: "Send Keys Batch", Toolset: "pane", Tier: config.Mutating, Preset: SHL,
			Description: "Send several key sequences in order, each to its own pane (e.g. answer prompts in several panes). One row per operation. For a single send use send_keys.",
		}, func(ctx context.Context, c *Call, a sendKeysBatchArgs) (SendKeysBatchResult, error) {
			if len(a.Operations) == 0 {
				return SendKeysBatchResult{}, expectedf("operations must contain at least one operation")
			}
			var deadline time.Time
			if a.Timeout != nil {
				if !(*a.Timeout > 0) || math.IsInf(*a.Timeout, 0) {
					return SendKeysBatchResult{}, expectedf("timeout must be a positive number of seconds")
				}
				deadline = time.Now().Add(time.Duration(*a.Timeout * float64(time.Second)))
			}
			sock := c.Socket(a.SocketArgs)
			res := SendKeysBatchResult{Results: []SendKeysOpResult{}}
			for i, op := range a.Operations {
				start := time.Now()
				row := SendKeysOpResult{Index: i}
				err := func() error {
					opCtx := ctx
					if !deadline.IsZero() {
						if !time.Now().Before(deadline) {
							return expectedf("batch execution exceeded timeout of %ss", pyFloat(*a.Timeout))
						}
						var cancel context.CancelFunc
						opCtx, cancel = context.WithDeadline(ctx, deadline)
						defer cancel()
					}
					id, err := c.targetPaneID(opCtx, sock, PaneTarget{PaneID: op.PaneID, SessionName: op.SessionName, SessionID: op.SessionID, WindowID: op.WindowID})
					if err != nil {
						return err
					}
					row.PaneID = &id
					err = c.pwSendKeys(opCtx, sock, id, op.Keys, op.Enter, op.Literal, op.SuppressHistory)
					if err != nil && !deadline.IsZero() && (errors.Is(err, tmux.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) {
						return expectedf("batch execution exceeded timeout of %ss", pyFloat(*a.Timeout))
					}
					return err
				}()
				row.ElapsedSeconds = math.Round(time.Since(start).Seconds()*1000) / 1000
				if err != nil {
					te := toToolError(err)
					msg := te.Msg
					if te.Suggestion != "" {
						msg += "\n" + te.Suggestion
					}
					row.Error = &msg
					res.Failed++
				} else {
					row.Success = true
					res.Succeeded++
				}
				res.Results = append(res.Results, row)
				if err != nil && a.OnError != "continue" {
					idx := i
					res.StoppedAt = &idx
					break
				}
			}
			return res, nil
		}),
		define(Tool{
			Name: "pipe_pane", Title: "Pipe Pane", Toolset: "pane", Tier: config.Mutating, Preset: SHL,
			Description: "Copy everything a pane prints from now on into a file, or stop with output_path=null. tmux keeps one pipe per pane, so this replaces any existing one. To read output instead use capture_since.",
		}, func(ctx context.Context, c *Call, a pipePaneArgs) (Text, error) {
			var path string
			if a.OutputPath != nil {
				if strings.TrimSpace(*a.OutputPath) == "" {
					return "", expectedf("output_path must not be blank; pass null to stop piping")
				}
				if err := pwNoNUL("output_path", *a.OutputPath); err != nil {
					return "", err
				}
				var err error
				if path, err = absPath("output_path", *a.OutputPath, c.host != ""); err != nil {
					return "", err
				}
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return "", err
			}
			if a.OutputPath == nil {
				if _, err := c.pwRun(ctx, sock, id, tmux.Command{"pipe-pane", "-t", id}); err != nil {
					return "", err
				}
				return Text("Piping stopped for pane " + id), nil
			}
			redirect := ">>"
			if !a.Append {
				redirect = ">"
			}
			// tmux runs the command with sh -c after format and strftime
			// expansion: quote the path for sh, then escape it for tmux.
			shell := tmux.LiteralFormat("cat "+redirect+" "+pwShellQuote(path), true)
			if _, err := c.pwRun(ctx, sock, id, tmux.Command{"pipe-pane", "-t", id, "--", shell}); err != nil {
				return "", err
			}
			return Text("Piping pane " + id + " to " + path), nil
		}),
	}
}

// pyFloat formats seconds the way the reference's messages do (5 -> "5.0").
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
