package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, channelTools) }

var channelName = lazyRegexp(`^[A-Za-z0-9_.:-]{1,128}$`)

type waitForChannelArgs struct {
	Channel string  `json:"channel" desc:"[A-Za-z0-9_.:-]{1,128}"`
	Timeout float64 `json:"timeout" default:"30.0" desc:"Seconds (> 0), capped by the wait ceiling."`
	SocketArgs
}

type signalChannelArgs struct {
	Channel string `json:"channel" desc:"[A-Za-z0-9_.:-]{1,128}"`
	SocketArgs
}

func channelTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "wait_for_channel", Title: "Wait For tmux Channel", Toolset: "wait", Tier: config.Mutating, Preset: MUT, SelfBounded: true,
			Description: "Block until a tmux wait-for channel is signalled (by signal_channel or `tmux wait-for -S NAME` in a script): the reliable wait for work you can make signal. A signal sent before the wait is latched for one later wait.",
		}, func(ctx context.Context, c *Call, a waitForChannelArgs) (Text, error) {
			if !channelName().MatchString(a.Channel) {
				return "", expectedf("channel must match [A-Za-z0-9_.:-]{1,128}")
			}
			eff, err := c.effectiveTimeout(a.Timeout)
			if err != nil {
				return "", err
			}
			sock := c.Socket(a.SocketArgs)
			wctx, cancel := context.WithTimeout(ctx, eff)
			defer cancel()
			stop := c.progressEvery(wctx, eff, func(elapsed time.Duration) string {
				return fmt.Sprintf("Waiting on channel '%s': %.1fs elapsed", a.Channel, elapsed.Seconds())
			})
			// wait-for blocks its client's command queue, so it always runs as
			// its own killable child process, never on a shared connection.
			_, err = c.tmux.RunChild(wctx, sock, tmux.Command{"wait-for", a.Channel})
			stop()
			switch {
			case err == nil:
			case endedEarly(ctx):
				return "", expectedf("wait-for on channel '%s' ended early: %v; the channel was not signalled", a.Channel, context.Cause(ctx))
			case ctx.Err() != nil:
				return "", ctx.Err()
			case wctx.Err() != nil || errors.Is(err, tmux.ErrTimeout):
				te := expectedf("wait-for timeout: channel '%s' was not signalled within %ss", a.Channel, pyFloat(eff.Seconds()))
				te.Type = typeTimeout // the reference's asyncio TimeoutError, chained as the cause
				return "", te
			default:
				return "", err
			}
			// tmux also ends a wait with status 0 when its server is killed, so
			// prove the server is still there before reporting a signal.
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			defer pcancel()
			if _, err := c.tmux.Run(pctx, sock, tmux.Command{"display-message", "-p", "#{pid}"}); err != nil {
				return "", fmt.Errorf("the tmux server went away while waiting on channel '%s': %w", a.Channel, err)
			}
			return Text(fmt.Sprintf("Channel '%s' was signalled (timeout %ss)", a.Channel, pyFloat(eff.Seconds()))), nil
		}),
		define(Tool{
			Name: "signal_channel", Title: "Signal tmux Channel", Toolset: "wait", Tier: config.Mutating, Preset: MUT,
			Description: "Signal a tmux wait-for channel, waking its waiters (wait_for_channel). With no waiter the signal is latched for the next wait.",
		}, func(ctx context.Context, c *Call, a signalChannelArgs) (Text, error) {
			if !channelName().MatchString(a.Channel) {
				return "", expectedf("channel must match [A-Za-z0-9_.:-]{1,128}")
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := c.tmux.Run(ctx, c.Socket(a.SocketArgs), tmux.Command{"wait-for", "-S", a.Channel}); err != nil {
				return "", err
			}
			return Text(fmt.Sprintf("Channel '%s' signalled", a.Channel)), nil
		}),
	}
}

// effectiveTimeout validates a wait's timeout and clamps it to the ceiling
// (clamp, never reject).
func (c *Call) effectiveTimeout(timeout float64) (time.Duration, error) {
	if !(timeout > 0) {
		return 0, expectedf("timeout must be greater than 0")
	}
	if timeout > c.cfg.WaitMax {
		timeout = c.cfg.WaitMax
	}
	return time.Duration(timeout * float64(time.Second)), nil
}

// progressInterval is how often a wait reports progress when the client
// asked for it; well under the 60 s request timeout some clients use.
var progressInterval = 5 * time.Second

// progressEvery sends a progress notification every progressInterval while
// a wait runs, if the client sent a progress token. It returns a stop func.
func (c *Call) progressEvery(ctx context.Context, total time.Duration, msg func(elapsed time.Duration) string) func() {
	if c.Req == nil || c.Req.Params == nil || c.Req.Session == nil {
		return func() {}
	}
	tok := c.Req.Params.GetProgressToken()
	if tok == nil {
		return func() {}
	}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				el := time.Since(start)
				_ = c.Req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: el.Seconds(), Total: total.Seconds(), Message: msg(el)})
			}
		}
	}()
	return func() { close(done) }
}
