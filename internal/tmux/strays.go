package tmux

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StrayClients remembers, per remote server, the pids of control clients
// whose connection ended on our side while the client may still be
// attached there.
//
// tmux (3.3a, and 3.4 still) does not let a control client go while it
// holds output it could not write: when the ssh session carrying it dies
// (a network drop, sshd's keep-alive giving up), the client's pipes break,
// its output can never drain, and the server keeps it attached for as long
// as it runs, however the client's input ended. A SIGTERM to the client
// process makes it leave at once. So a lost client's remote pid is kept
// here, and the next connection to that server (or the runner's Close)
// ends those still listed (reapStrays).
type StrayClients struct {
	mu sync.Mutex
	m  map[Socket][]int
}

// maxStrays bounds what is kept per server: one per lost connection, so
// only a host that keeps dropping without ever coming back reaches it.
const maxStrays = 64

// Add remembers pid (a remote client's) as possibly left attached on sock.
func (s *StrayClients) Add(sock Socket, pid int) {
	if s == nil || pid <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[Socket][]int{}
	}
	l := s.m[sock]
	if slices.Contains(l, pid) {
		return
	}
	if len(l) >= maxStrays {
		l = l[1:]
	}
	s.m[sock] = append(l, pid)
}

// Take returns and forgets the pids kept for sock.
func (s *StrayClients) Take(sock Socket) []int {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.m[sock]
	delete(s.m, sock)
	return l
}

// StrayKeeper is a Via that keeps the stray clients of its host.
type StrayKeeper interface {
	Strays() *StrayClients
}

// straysOf is v's keeper, or nil.
func straysOf(v Via) *StrayClients {
	if k, ok := v.(StrayKeeper); ok {
		return k.Strays()
	}
	return nil
}

// reapStrays ends, over the live connection c to sock's server, the stray
// clients kept for it that the server still lists: only a pid the server
// shows as one of its clients gets the signal, so a pid reused by another
// process since is never touched. The command is built from integers only.
func reapStrays(ctx context.Context, c *controlConn, keep *StrayClients, sock Socket) error {
	pids := keep.Take(sock)
	if len(pids) == 0 {
		return nil
	}
	outs, err := c.run(ctx, []Command{{"list-clients", "-F", "#{client_pid}"}}, nil)
	if err != nil {
		for _, p := range pids {
			keep.Add(sock, p)
		}
		return err
	}
	listed := map[int]bool{}
	for _, f := range strings.Fields(string(outs[0])) {
		if n, err := strconv.Atoi(f); err == nil {
			listed[n] = true
		}
	}
	var kill []string
	for _, p := range pids {
		if listed[p] {
			kill = append(kill, strconv.Itoa(p))
		}
	}
	if len(kill) == 0 {
		return nil
	}
	// The strays are attached control clients: tmux tells every control
	// client when one goes, so their end is held apart from our starts
	// (see attachGate) until the server no longer lists them.
	if c.tgt != nil {
		leave, err := c.tgt.gate.enterNotify(ctx)
		if err != nil {
			return err
		}
		defer leave()
	}
	_, err = c.run(ctx, []Command{{"run-shell", "kill -TERM " + strings.Join(kill, " ")}}, nil)
	if err != nil {
		return fmt.Errorf("ending stray control clients %v: %w", kill, err)
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		outs, err := c.run(ctx, []Command{{"list-clients", "-F", "#{client_pid}"}}, nil)
		if err != nil || !listsAny(string(outs[0]), kill) {
			break
		}
	}
	return nil
}

// listsAny reports whether the list-clients output names any of pids.
func listsAny(out string, pids []string) bool {
	for _, f := range strings.Fields(out) {
		for _, p := range pids {
			if f == p {
				return true
			}
		}
	}
	return false
}
