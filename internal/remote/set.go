package remote

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Set is the configured remote hosts, each with its tmux engine (a
// control-mode runner and output watchers over that host's ssh
// connections), made on first use. The tool layer routes a call's host
// argument through it; the local machine is not in it.
type Set struct {
	opts  Options
	specs map[string]Spec

	mu      sync.Mutex
	engines map[string]*Engine
	closed  bool
}

// Engine is what a call on one remote host uses.
type Engine struct {
	Host     *Host
	Runner   *tmux.ControlRunner
	Client   *tmux.Client
	Watchers *tmux.Watchers
}

// ErrUnknownHost: a call named a host that is not configured.
var ErrUnknownHost = errors.New("unknown host")

// NewSet checks every spec (names unique) and returns the set; nothing
// connects until a host is used.
func NewSet(specs []Spec, opts Options) (*Set, error) {
	s := &Set{opts: opts, specs: map[string]Spec{}, engines: map[string]*Engine{}}
	for _, sp := range specs {
		if _, err := New(sp, opts); err != nil {
			return nil, err
		}
		if _, dup := s.specs[sp.Name]; dup {
			return nil, fmt.Errorf("%w: host %s given twice", ErrBadHost, sp.Name)
		}
		s.specs[sp.Name] = sp
	}
	return s, nil
}

// Names lists the configured hosts, sorted (for completion and errors).
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.specs))
	for n := range s.specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Get returns the engine of a configured host.
func (s *Set) Get(name string) (*Engine, error) {
	sp, ok := s.specs[name]
	if !ok {
		known := "none are configured (TMUX_MCP_HOSTS)"
		if len(s.specs) > 0 {
			known = "configured: " + strings.Join(s.Names(), ", ")
		}
		return nil, fmt.Errorf("%w %s: %s", ErrUnknownHost, errarg.Quoted(name), known)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%w: host %s: shutting down", tmux.ErrHostUnreachable, name)
	}
	if e := s.engines[name]; e != nil {
		return e, nil
	}
	h, err := New(sp, s.opts)
	if err != nil {
		return nil, err
	}
	r := h.NewRunner()
	e := &Engine{Host: h, Runner: r, Client: &tmux.Client{Runner: r}, Watchers: h.NewWatchers()}
	s.engines[name] = e
	return e, nil
}

// States counts the configured hosts by Host.State; a host no call has
// named yet has no engine and is idle.
func (s *Set) States() (up, down, idle int) {
	s.mu.Lock()
	engines := make([]*Engine, 0, len(s.engines))
	for _, e := range s.engines {
		engines = append(engines, e)
	}
	s.mu.Unlock()
	idle = len(s.specs) - len(engines)
	for _, e := range engines {
		switch e.Host.State() {
		case HostUp:
			up++
		case HostDown:
			down++
		default:
			idle++
		}
	}
	return up, down, idle
}

// Close detaches every watcher and control client and stops every ssh
// connection; Get fails afterwards.
func (s *Set) Close() error {
	s.mu.Lock()
	s.closed = true
	engines := s.engines
	s.engines = map[string]*Engine{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Watchers.CloseAll()
			_ = e.Runner.Close()
			_ = e.Host.Close()
		}()
	}
	wg.Wait()
	return nil
}
