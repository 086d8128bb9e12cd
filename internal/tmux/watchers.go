package tmux

import (
	"context"
	"errors"
	"sync"
)

// Watchers shares one Watcher per (server, session) among all waits, so
// many concurrent waits on many panes cost no more tmux work than one.
type Watchers struct {
	Bin string   // tmux binary
	Env []string // child environment (nil: inherit)
	// Via, when set, attaches the watchers on another host (see Via); Bin
	// is then the remote tmux binary.
	Via Via

	mu       sync.Mutex
	m        map[watchKey]*Watcher
	starting map[watchKey]chan struct{} // closed when that attach ends
	closed   bool                       // CloseAll ran: attach no more
}

// ErrWatchersClosed: the server is shutting down, so no new control client
// is attached (a follower that lost its watcher must not bring one back).
var ErrWatchersClosed = errors.New("tmux watchers closed")

type watchKey struct {
	sock    Socket
	session string
}

// PaneWhere is where a pane lives, read in the same query that proves it
// exists, with the identity of its tmux server: after a server restart pane
// ids start again at %0, so a pane id alone does not name the same pane.
type PaneWhere struct {
	Pane, Window, Session string
	Server                string // server pid and start time
}

// WhereFields are the format fields WhereOf reads, for a caller that adds
// them to a query it makes anyway.
var WhereFields = []string{"pane_id", "window_id", "session_id", "pid", "start_time"}

// WhereOf reads a PaneWhere from a row that has WhereFields.
func WhereOf(r Row) PaneWhere {
	return PaneWhere{Pane: r["pane_id"], Window: r["window_id"], Session: r["session_id"], Server: r["pid"] + "/" + r["start_time"]}
}

// Locate finds a pane's window and (first) session.
func (c *Client) Locate(ctx context.Context, sock Socket, pane PaneID) (PaneWhere, error) {
	rows, err := c.Rows(ctx, sock, Command{"list-panes", "-t", string(pane)}, WhereFields)
	if err != nil {
		return PaneWhere{}, err
	}
	for _, r := range rows {
		if r["pane_id"] == string(pane) {
			return WhereOf(r), nil
		}
	}
	return PaneWhere{}, &NotFoundError{What: "pane", Detail: string(pane)}
}

// Get returns the live watcher for a session, attaching one if needed.
// Attaching takes a round trip to tmux (up to seconds when tmux is slow),
// so it happens outside ws.mu: PIDs and the other sessions' watchers are
// not held up, and callers for the same session wait for that one attach.
func (ws *Watchers) Get(sock Socket, session string) (*Watcher, error) {
	k := watchKey{sock, session}
	ws.mu.Lock()
	for {
		if ws.closed {
			ws.mu.Unlock()
			return nil, ErrWatchersClosed
		}
		if w := ws.m[k]; w != nil {
			select {
			case <-w.Done():
			default:
				if w.lease() {
					ws.mu.Unlock()
					return w, nil
				}
				// Closing: attach a new one, which replaces it here.
			}
		}
		started := ws.starting[k]
		if started == nil {
			break
		}
		ws.mu.Unlock()
		<-started // then look again: it may have failed
		ws.mu.Lock()
	}
	if ws.m == nil {
		ws.m = map[watchKey]*Watcher{}
		ws.starting = map[watchKey]chan struct{}{}
	}
	started := make(chan struct{})
	ws.starting[k] = started
	ws.mu.Unlock()

	w, err := startWatcher(binOrDefault(ws.Bin), ws.Env, sock, session, ws.Via)

	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.starting, k)
	close(started)
	if err != nil {
		return nil, err
	}
	if ws.closed {
		go w.Close()
		return nil, ErrWatchersClosed
	}
	w.onClose = func() {
		ws.mu.Lock()
		if ws.m[k] == w {
			delete(ws.m, k)
		}
		ws.mu.Unlock()
	}
	ws.m[k] = w
	return w, nil
}

// Count reports how many watchers are attached (tests and doctor).
func (ws *Watchers) Count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.m)
}

// PIDs returns the process ids of the attached watcher clients, so results
// such as session_attached can leave our own clients out.
func (ws *Watchers) PIDs() map[int]bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := map[int]bool{}
	for _, w := range ws.m {
		if w.clientPID != 0 {
			out[w.clientPID] = true
		} else if pid := w.c.pid(); pid != 0 {
			out[pid] = true
		}
	}
	return out
}

// CloseAll detaches every watcher; Get attaches no new one afterwards.
func (ws *Watchers) CloseAll() {
	ws.mu.Lock()
	ws.closed = true
	all := make([]*Watcher, 0, len(ws.m))
	for _, w := range ws.m {
		all = append(all, w)
	}
	ws.mu.Unlock()
	for _, w := range all {
		w.Close()
	}
}

// Subscriptions counts the live subscriptions over all watchers (tests wait
// on it instead of sleeping).
func (ws *Watchers) Subscriptions() int {
	ws.mu.Lock()
	all := make([]*Watcher, 0, len(ws.m))
	for _, w := range ws.m {
		all = append(all, w)
	}
	ws.mu.Unlock()
	n := 0
	for _, w := range all {
		w.mu.Lock()
		for _, set := range w.subs {
			n += len(set)
		}
		w.mu.Unlock()
	}
	return n
}
