package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// paneStream follows one pane's output through the session watcher, and
// moves to another watcher when the pane's window changes session.
type paneStream struct {
	c     *Call
	sock  tmux.Socket
	where tmux.PaneWhere
	sub   *tmux.Subscription
	lost  atomic.Bool // output may have been missed (read from other goroutines)
	timed bool        // the subscription is timed (a recording's: recordings.go)
}

// openStream subscribes to a pane and runs entry commands as one step: the
// stream then holds exactly what the pane prints after those commands ran.
func (c *Call) openStream(ctx context.Context, sock tmux.Socket, pane string, entry ...tmux.Command) (*paneStream, [][]byte, error) {
	pid, err := tmux.ParsePaneID(pane)
	if err != nil {
		return nil, nil, err
	}
	where, err := c.tmux.Locate(ctx, sock, pid)
	if err != nil {
		return nil, nil, notFoundAs(err, "pane", pane)
	}
	return c.openStreamAt(ctx, sock, where, entry...)
}

// notify is signalled when there is new output or a change of state.
func (ps *paneStream) notify() <-chan struct{} { return ps.sub.Notify() }

// take returns the output since the last take. If the pane's window left
// the watched session (or the watcher ended) it follows the pane to its new
// session; output in between may be missed, which sets lost. A pane that no
// longer exists is an error.
func (ps *paneStream) take(ctx context.Context) ([]byte, error) {
	data := ps.sub.Take()
	if ps.sub.Lost() {
		ps.lost.Store(true)
	}
	if !ps.sub.Moved() {
		return data, nil
	}
	ps.sub.Close()
	return data, ps.follow(ctx)
}

// follow subscribes to the pane again, wherever it is now, after its
// subscription ended; output in between may be missed, which sets lost. A
// pane that no longer exists, or a server that is not the one that was
// followed, is an error; so is a host that does not answer (the caller
// may try again).
func (ps *paneStream) follow(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	where, err := ps.c.tmux.Locate(ctx, ps.sock, tmux.PaneID(ps.where.Pane))
	if err != nil {
		return notFoundAs(err, "pane", ps.where.Pane)
	}
	if ps.where.Server != "" && where.Server != ps.where.Server {
		return expectedf("the tmux server restarted; pane %s is not the pane that was being followed", ps.where.Pane)
	}
	w, err := ps.c.watch.Get(ps.sock, where.Session)
	if err != nil {
		return err
	}
	ps.where = where
	if ps.timed {
		ps.sub = w.SubscribeTimed(where.Pane, where.Window)
	} else {
		ps.sub = w.Subscribe(where.Pane, where.Window)
	}
	ps.lost.Store(true)
	return nil
}

func (ps *paneStream) close() { ps.sub.Close() }
