package tmux

import (
	"context"
	"errors"
	"sync"
	"time"
)

// attachGate keeps the control clients this process starts out of the way
// of the notifications tmux sends to every control client.
//
// tmux before 3.7 crashes (SIGSEGV in control_write, tmux PR 4980) when it
// sends such a notification while a control client is half identified: the
// client's identify flags mark it as a control client several event-loop
// turns before its control state exists (the identify messages that carry
// file descriptors arrive in separate reads). The notifications that go to
// every control client, with no check that it is attached, are
// %client-detached (an attached client going away, such as one of our
// watchers detaching), %sessions-changed, %session-renamed,
// %session-window-changed, %window-pane-changed and %pane-mode-changed.
// Under the HTTP load test, watchers starting for some sessions while idle
// watchers of others detached killed the tmux server about once in nine
// runs, and every later call then rightly said that no server was running.
//
// So, per tmux server, a control client being started (from its spawn to
// the reply to its attach command, which tmux runs only once the client is
// identified) and anything of ours that can make tmux send such a
// notification (a command not known to be silent, or one of our attached
// clients detaching, until tmux has dealt with its going) never overlap.
// Starts run alongside each other, and so do notifiers; a waiting start
// waits for the notifiers already in and holds back new ones, and the
// other way round, so neither starves. The gate cannot hold back what
// other tmux clients do.
type attachGate struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	turns   gateTurns

	// Detach round trips (see syncAfter): asked counts requests, done is
	// the highest request a finished round trip covers.
	asked, done uint64
	syncing     bool
}

// gateTurns is the bookkeeping of an attachGate's two sides, apart from
// the waking, so that every state it can reach is checked in a test
// (TestGateTurnsNeverDeadlock).
type gateTurns struct {
	active  gateKind // the kind holding the gate while count > 0
	count   int
	waiting [2]int
	// admit counts the waiters of a kind let in together when the turn
	// passed to that kind; until they are in, the other kind waits.
	admit [2]int
}

// gateKind is a side of an attachGate.
type gateKind int

const (
	gateStart  gateKind = iota // a control client identifying
	gateNotify                 // something that may notify every control client
)

type gateKey struct {
	host string // Via.Host(), "" for this host
	sock Socket
}

var (
	gatesMu sync.Mutex
	gates   = map[gateKey]*attachGate{}
)

// gateFor returns the gate of the tmux server sock selects, on the host via
// reaches (this host when via is nil).
func gateFor(via Via, sock Socket) *attachGate {
	k := gateKey{sock: sock}
	if via != nil {
		k.host = via.Host()
	}
	gatesMu.Lock()
	defer gatesMu.Unlock()
	g := gates[k]
	if g == nil {
		g = &attachGate{}
		gates[k] = g
	}
	return g
}

// mayEnter reports whether a waiter of kind k may hold the gate now. The
// kinds take turns: while one kind waits, the other admits no newcomer,
// so neither starves.
func (t *gateTurns) mayEnter(k gateKind) bool {
	o := 1 - k
	switch {
	case t.admit[o] > 0:
		return false
	case t.count == 0:
		return true
	case t.active == k:
		return t.waiting[o] == 0 || t.admit[k] > 0
	}
	return false
}

// arrive counts a new waiter of kind k.
func (t *gateTurns) arrive(k gateKind) { t.waiting[k]++ }

// enter turns a waiter of kind k, which mayEnter allowed, into a holder.
func (t *gateTurns) enter(k gateKind) {
	t.waiting[k]--
	if t.admit[k] > 0 {
		t.admit[k]--
	}
	t.active = k
	t.count++
}

// giveUp drops a waiter of kind k whose context ended.
func (t *gateTurns) giveUp(k gateKind) {
	t.waiting[k]--
	t.admit[k] = min(t.admit[k], t.waiting[k])
}

// leave ends a holding. The last holder out passes the turn to the other
// kind when it waits, unless waiters of its own kind admitted with the
// turn are still to come in: passing the turn then would leave both kinds
// admitted, each held back by the other's admission, for good.
func (t *gateTurns) leave() {
	t.count--
	k := t.active
	if o := 1 - k; t.count == 0 && t.admit[k] == 0 && t.waiting[o] > 0 {
		t.active = o
		t.admit[o] = t.waiting[o]
	}
}

// enter waits until k may hold the gate, and holds it until the returned
// func is called.
func (g *attachGate) enter(ctx context.Context, k gateKind) (func(), error) {
	g.mu.Lock()
	g.turns.arrive(k)
	for !g.turns.mayEnter(k) {
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			g.mu.Lock()
			g.turns.giveUp(k)
			g.signalLocked()
			g.mu.Unlock()
			return nil, ctx.Err()
		}
		g.mu.Lock()
	}
	g.turns.enter(k)
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.turns.leave()
			g.signalLocked()
			g.mu.Unlock()
		})
	}, nil
}

// signalLocked wakes every waiter to look again; g.mu is held.
func (g *attachGate) signalLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// enterStart holds the gate for a control client that is starting.
func (g *attachGate) enterStart(ctx context.Context) (func(), error) {
	return g.enter(ctx, gateStart)
}

// enterNotify holds the gate for something that may notify every control
// client.
func (g *attachGate) enterNotify(ctx context.Context) (func(), error) {
	return g.enter(ctx, gateNotify)
}

// silentCommands never make tmux 3.3a notify control clients that are not
// attached to a session: reads, buffers, the client's own subscriptions and
// wait-for (which may block for minutes, so it must not hold the gate).
var silentCommands = map[string]bool{}

func init() {
	for _, n := range []string{
		"display-message", "display", "list-sessions", "ls", "list-windows", "lsw", "list-panes", "lsp",
		"list-buffers", "lsb", "list-clients", "lsc", "list-keys", "lsk", "list-commands", "lscm",
		"capture-pane", "capturep", "show-options", "show", "show-window-options", "showw",
		"show-environment", "showenv", "show-hooks", "has-session", "has",
		"show-buffer", "showb", "save-buffer", "saveb", "set-buffer", "setb", "delete-buffer", "deleteb",
		"load-buffer", "loadb", "refresh-client", "refresh", "wait-for", "wait",
	} {
		silentCommands[n] = true
	}
}

// mayNotify reports whether running cmds may make tmux send a notification
// to every control client (see attachGate).
func mayNotify(cmds []Command) bool {
	for _, c := range cmds {
		if len(c) == 0 || !silentCommands[c[0]] {
			return true
		}
	}
	return false
}

// notifying runs fn, holding g as a notifier when cmds may notify.
func (g *attachGate) notifying(ctx context.Context, cmds []Command, fn func() ([][]byte, error)) ([][]byte, error) {
	if !mayNotify(cmds) {
		return fn()
	}
	start := time.Now()
	leave, err := g.enterNotify(ctx)
	if err != nil {
		return nil, ctxError(ctx, cmds, start)
	}
	defer leave()
	return fn()
}

// detachSync bounds the round trip that tells a detach is done: a tmux
// server busy with fifty clients on two loaded cores took over two seconds.
const detachSync = 10 * time.Second

// gateWait bounds how long a start waits at the gate, apart from its
// attach bound: fifty clients typing at once on two loaded cores kept
// starts waiting for over five seconds.
const gateWait = 30 * time.Second

// startSettle bounds how long a start whose attach went unanswered keeps
// the gate (see endStart).
const startSettle = 10 * time.Second

// endStart ends the start of c once it can no longer be half identified:
// at once when the attach was answered (err nil, or tmux's refusal), else
// once tmux answers it after all or the client exits, within startSettle.
// An attach that timed out on a busy server may still be identifying, and
// a notification then would crash it; the detach that follows waits.
func (c *controlConn) endStart(started func(), err error) {
	var ce *CommandError
	if err == nil || errors.As(err, &ce) {
		started()
		return
	}
	go func() {
		t := time.NewTimer(startSettle)
		defer t.Stop()
		select {
		case <-c.attached:
		case <-c.exited:
		case <-t.C:
		}
		started()
	}()
}

// syncAfter runs one round trip to the server that starts after this call
// (see ctlTarget), sharing it with every detach that asks meanwhile: fifty
// idle watchers closing together cost one or two tmux processes, not fifty.
func (g *attachGate) syncAfter(run func()) {
	g.mu.Lock()
	g.asked++
	mine := g.asked
	for g.done < mine {
		if !g.syncing {
			g.syncing = true
			covers := g.asked
			g.mu.Unlock()
			run()
			g.mu.Lock()
			g.syncing = false
			g.done = max(g.done, covers)
			g.signalLocked()
			continue
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		<-ch
		g.mu.Lock()
	}
	g.mu.Unlock()
}

// ctlTarget is what a control connection needs to detach safely: the gate
// of its tmux server and one round trip to that server, which tmux answers
// only after it has dealt with a client that went away before it (the
// round trip's new connection is accepted in a later event-loop turn than
// the one that saw the old client's socket close).
type ctlTarget struct {
	gate *attachGate
	sync func()
}

// targetOf is the ctlTarget of the server sock selects with bin, on the
// host via reaches.
func targetOf(bin string, env []string, sock Socket, via Via) *ctlTarget {
	ex := &ExecRunner{Bin: bin, Env: env, Via: via, Timeout: detachSync}
	g := gateFor(via, sock)
	return &ctlTarget{gate: g, sync: func() {
		g.syncAfter(func() {
			ctx, cancel := context.WithTimeout(context.Background(), detachSync)
			defer cancel()
			_, _ = ex.Run(ctx, sock, Command{"display-message", "-p", "."})
		})
	}}
}
