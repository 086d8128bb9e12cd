// Package remote reaches tmux servers on other hosts through the system
// ssh. It is the transport only: it implements tmux.Via, so the tmux
// package's runners and watchers drive remote servers with the same
// control-mode engine, framing and nonce checks as local ones.
//
// Why the system ssh and not a Go SSH library: users' ~/.ssh/config,
// agents, ProxyJump, certificates, known_hosts and their own
// ControlMaster set-ups must all just work, and they only do in ssh.
//
// Each Host keeps connection masters ("ssh -M -N", ControlPersist=no) as
// children of this process (they die with it), with control sockets in a
// private 0700 directory. Every remote process (the control-mode client
// per remote server, a watcher per watched session, one-off calls) is a
// multiplexed client of a master, so it costs a channel open, not a
// handshake. sshd caps the channels of one connection (MaxSessions,
// default 10): a Host counts the channels it holds per master and opens
// another master when one is full (up to MaxMasters), and a call that
// finds every channel busy waits for one until its context ends, then
// fails saying so.
//
// The options are never weakened: BatchMode=yes (never prompt: a prompt
// would hang a tool call), StrictHostKeyChecking as the user configured it,
// a connect timeout, and ServerAliveInterval/CountMax so a network that
// silently drops is noticed within the keep-alive window.
package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Spec is one configured remote host (config.Host parsed from
// TMUX_MCP_HOSTS): a name, where ssh goes, and optionally the remote tmux
// binary and socket.
type Spec struct {
	Name        string
	Destination string // an ssh alias, user@host or ssh://user@host:port
	TmuxBin     string // remote tmux binary; "tmux" when empty
	Socket      string // remote socket name (-L); empty: the remote default
}

// Options tune the transport; zero values take the defaults.
type Options struct {
	// SSHCommand is the user's ssh invocation (TMUX_MCP_SSH_COMMAND, e.g.
	// "ssh -F file"); ["ssh"] when empty. Our options follow it, so an
	// option the user gives there wins (ssh keeps the first value).
	SSHCommand []string
	// ConnectTimeout bounds the TCP connect and handshake; 10 s.
	ConnectTimeout time.Duration
	// AliveInterval and AliveCount are ServerAliveInterval and
	// ServerAliveCountMax: a silent network is noticed after about their
	// product; 5 s and 3.
	AliveInterval time.Duration
	AliveCount    int
	// StartTimeout bounds how long the remote login shell may take to
	// start tmux; 10 s.
	StartTimeout time.Duration
	// MaxSessions is the number of channels used per connection (sshd's
	// MaxSessions, default 10).
	MaxSessions int
	// MaxMasters is how many connections one host may have; 4.
	MaxMasters int
	// MaxConnecting bounds the handshakes of a host's own-connection
	// processes (waits, see StartTTY) in progress at once; 4, under
	// sshd's default MaxStartups (10), beyond which sshd drops new
	// connections at random.
	MaxConnecting int
	// Env, when non-nil, is the environment of every ssh process.
	Env []string
}

func (o Options) withDefaults() Options {
	if len(o.SSHCommand) == 0 {
		o.SSHCommand = []string{"ssh"}
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.AliveInterval <= 0 {
		o.AliveInterval = 5 * time.Second
	}
	if o.AliveCount <= 0 {
		o.AliveCount = 3
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10
	}
	if o.MaxMasters <= 0 {
		o.MaxMasters = 4
	}
	if o.MaxConnecting <= 0 {
		o.MaxConnecting = 4
	}
	return o
}

// ErrBusy: every channel the host may open is in use (sshd's MaxSessions
// times MaxMasters) and none came free before the call's deadline.
var ErrBusy = errors.New("all ssh sessions to the host are busy")

// Host is one remote host: its connection masters and the tmux client
// that runs on them. It implements tmux.Via.
type Host struct {
	spec Spec
	opts Options

	mu       sync.Mutex
	dir      string // private control socket directory, made on first use
	masters  []*master
	next     int  // names the next master's socket
	starting bool // a master is being started
	changed  chan struct{}
	closed   bool
	lastErr  string    // the last message of a master that ended
	lastAt   time.Time // when it was seen
	tried    bool      // a master was started (or tried): no longer idle (State)

	connecting chan struct{} // StartTTY handshakes in progress

	// strays are remote control clients whose ssh session was lost,
	// ended by the next connection to their server (tmux.StrayClients).
	strays tmux.StrayClients
}

// Strays implements tmux.StrayKeeper.
func (h *Host) Strays() *tmux.StrayClients { return &h.strays }

type master struct {
	path   string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	stderr *lockedText
	used   int // channels held, guarded by Host.mu
}

func (m *master) alive() bool {
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// New checks a host's spec and returns it; nothing connects until the
// first call.
func New(spec Spec, opts Options) (*Host, error) {
	if err := CheckName(spec.Name); err != nil {
		return nil, err
	}
	if err := CheckDestination(spec.Destination); err != nil {
		return nil, err
	}
	if spec.TmuxBin != "" {
		if err := tmux.CheckRemoteWord("the remote tmux binary", spec.TmuxBin); err != nil {
			return nil, err
		}
	}
	if spec.Socket != "" {
		if err := tmux.CheckRemoteWord("the remote socket", spec.Socket); err != nil {
			return nil, err
		}
	}
	o := opts.withDefaults()
	return &Host{spec: spec, opts: o, changed: make(chan struct{}), connecting: make(chan struct{}, o.MaxConnecting)}, nil
}

// ErrBadHost: a host name or destination that is not allowed.
var ErrBadHost = errors.New("invalid remote host")

// CheckName accepts host names of letters, digits, '.', '_' and '-', not
// starting with '-', at most 64 bytes.
func CheckName(name string) error {
	if name == "" || len(name) > 64 || name[0] == '-' || name == "local" {
		return fmt.Errorf("%w: a host name must be 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '-', and not \"local\"", ErrBadHost)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%w: a host name must be 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '-', and not \"local\"", ErrBadHost)
		}
	}
	return nil
}

// CheckDestination accepts what ssh takes as a destination, but never a
// word starting with '-' (ssh would read it as an option: "-oProxyCommand=…"
// runs a command) nor whitespace or control characters. It is passed after
// "--" as well.
func CheckDestination(dest string) error {
	if dest == "" || dest[0] == '-' || len(dest) > 512 {
		return fmt.Errorf("%w: a destination must be non-empty, at most 512 bytes and must not start with '-'", ErrBadHost)
	}
	for _, r := range dest {
		if r <= ' ' || r == 0x7f || r == '\'' || r == '"' || r == '\\' || r == '`' || r == '$' || r == ';' || r == '|' || r == '&' {
			return fmt.Errorf("%w: a destination must not contain spaces, quotes or shell characters", ErrBadHost)
		}
	}
	return nil
}

// Host implements tmux.Via.
func (h *Host) Host() string { return h.spec.Name }

// Spec returns the host's configuration.
func (h *Host) Spec() Spec { return h.spec }

// StartTimeout implements tmux.Via.
func (h *Host) StartTimeout() time.Duration { return h.opts.StartTimeout }

// Socket is the tmux socket a call names on this host: the call's own
// when it gives one, else the host's configured socket.
func (h *Host) Socket(call tmux.Socket) tmux.Socket {
	if call.Name != "" || call.Path != "" || h.spec.Socket == "" {
		return call
	}
	return tmux.Socket{Name: h.spec.Socket}
}

// baseOptions are the ssh options of every process: after the user's
// words, before the destination.
func (h *Host) baseOptions() []string {
	o := h.opts
	return []string{
		"-T",
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout=" + seconds(o.ConnectTimeout),
		"-o", "ServerAliveInterval=" + seconds(o.AliveInterval),
		"-o", "ServerAliveCountMax=" + strconv.Itoa(o.AliveCount),
	}
}

func seconds(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	return strconv.Itoa(max(s, 1))
}

// Start implements tmux.Via: a channel on a master (starting one when
// needed), as the argv of a multiplexed ssh client running words.
func (h *Host) Start(ctx context.Context, words []string) ([]string, func(), error) {
	m, err := h.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{}, h.opts.SSHCommand...)
	argv = append(argv, h.baseOptions()...)
	argv = append(argv, "-o", "ControlMaster=no", "-o", "ControlPath="+m.path, "--", h.spec.Destination, strings.Join(words, " "))
	var once sync.Once
	release := func() { once.Do(func() { h.release(m) }) }
	return argv, release, nil
}

// StartTTY implements tmux.TTYVia: the remote command with a terminal
// (ssh -tt), so that it is hung up when its connection ends. It runs on a
// connection of its own, not a channel of a master: OpenSSH's multiplexed
// clients did not relay a terminal session's output nor notice its end
// here (OpenSSH 9.2), so a wait pays one handshake, which is small next to
// the wait itself, and holds no channel of the masters. At most
// MaxConnecting of them handshake at once: the caller releases as soon as
// the remote command has started (tmux.TTYVia), or when it ends.
func (h *Host) StartTTY(ctx context.Context, words []string) ([]string, func(), error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, nil, fmt.Errorf("%w: host %s: closed", tmux.ErrHostUnreachable, h.spec.Name)
	}
	select {
	case h.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%w: host %s: %d connections were being set up: %w",
			ErrBusy, h.spec.Name, h.opts.MaxConnecting, ctx.Err())
	}
	var once sync.Once
	release := func() { once.Do(func() { <-h.connecting }) }
	argv := append([]string{}, h.opts.SSHCommand...)
	argv = append(argv, h.baseOptions()...)
	argv = append(argv, "-tt", "-o", "ControlMaster=no", "-o", "ControlPath=none", "--", h.spec.Destination, strings.Join(words, " "))
	return argv, release, nil
}

// MasterArgv is the argv of a connection master with the given control
// socket path (exported for tests of the argv).
func (h *Host) MasterArgv(path string) []string {
	argv := append([]string{}, h.opts.SSHCommand...)
	argv = append(argv, h.baseOptions()...)
	return append(argv, "-N", "-M", "-o", "ControlPersist=no", "-o", "ControlPath="+path, "--", h.spec.Destination)
}

func (h *Host) acquire(ctx context.Context) (*master, error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, fmt.Errorf("%w: host %s: closed", tmux.ErrHostUnreachable, h.spec.Name)
		}
		live := h.masters[:0]
		for _, m := range h.masters {
			if m.alive() {
				live = append(live, m)
			} else {
				h.noteEndLocked(m)
			}
		}
		h.masters = live
		for _, m := range live {
			if m.used < h.opts.MaxSessions {
				m.used++
				h.mu.Unlock()
				return m, nil
			}
		}
		if !h.starting && len(live) < h.opts.MaxMasters {
			h.starting = true
			h.mu.Unlock()
			m, err := h.startMaster()
			h.mu.Lock()
			h.starting = false
			if err == nil {
				if h.closed {
					h.mu.Unlock()
					m.stop()
					continue
				}
				h.masters = append(h.masters, m)
			}
			h.notifyLocked()
			h.mu.Unlock()
			if err != nil {
				return nil, err
			}
			continue
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: host %s: %d channels on %d connections (sshd MaxSessions %d each) stayed busy: %w",
				ErrBusy, h.spec.Name, h.opts.MaxSessions*h.opts.MaxMasters, h.opts.MaxMasters, h.opts.MaxSessions, ctx.Err())
		}
	}
}

// noteEndLocked keeps the reason a master ended, for Diagnose.
func (h *Host) noteEndLocked(m *master) {
	if r := reason(m.stderr.String(), m.cmd); r != "" {
		h.lastErr, h.lastAt = r, time.Now()
	}
}

// Diagnose implements tmux.Diagnoser: why a connection of this host last
// ended (within the last minute), as ssh said it.
func (h *Host) Diagnose() string {
	h.mu.Lock()
	ms := append([]*master{}, h.masters...)
	h.mu.Unlock()
	// The channel a caller lost usually closed because its master is
	// exiting, and what the master says reaches us through exec's copying
	// goroutine, possibly a little after the channel closed (a busy
	// machine saw the reason missing): give the masters a moment to print
	// or end. A healthy master costs this error path 300 ms at most.
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if slices.ContainsFunc(ms, func(m *master) bool { return m.stderr.String() != "" || !m.alive() }) {
			break
		}
	}
	// A master that printed something is usually on its way out: the
	// channel a caller lost closed because it exited. Give it a moment.
	for _, m := range ms {
		if m.stderr.String() != "" {
			select {
			case <-m.done:
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range ms {
		if !m.alive() {
			h.noteEndLocked(m)
		}
	}
	if time.Since(h.lastAt) > time.Minute {
		return ""
	}
	return h.lastErr
}

func (h *Host) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Host) release(m *master) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m.used--
	h.notifyLocked()
}

// startMaster starts a connection master and waits until its control
// socket exists (the handshake is done) or it exits (the reason is its
// last message: refused key, unknown or changed host key, no route).
func (h *Host) startMaster() (*master, error) {
	h.mu.Lock()
	if h.dir == "" {
		dir, err := os.MkdirTemp("", "tmux-mcp-ssh-")
		if err != nil {
			h.mu.Unlock()
			return nil, fmt.Errorf("%w: host %s: control directory: %w", tmux.ErrHostUnreachable, h.spec.Name, err)
		}
		_ = os.Chmod(dir, 0o700)
		h.dir = dir
	}
	path := filepath.Join(h.dir, "m"+strconv.Itoa(h.next))
	h.next++
	h.tried = true
	h.mu.Unlock()
	_ = os.Remove(path)

	m := &master{path: path, done: make(chan struct{}), stderr: &lockedText{}}
	argv := h.MasterArgv(path)
	m.cmd = exec.Command(argv[0], argv[1:]...)
	m.cmd.Stderr = m.stderr
	if h.opts.Env != nil {
		m.cmd.Env = h.opts.Env
	}
	if err := tmux.StartChild(m.cmd); err != nil {
		return nil, fmt.Errorf("%w: host %s: starting ssh: %w", tmux.ErrHostUnreachable, h.spec.Name, err)
	}
	go func() {
		_ = m.cmd.Wait()
		close(m.done)
	}()
	// The handshake is bounded by ConnectTimeout for the connect and the
	// keep-alives afterwards; this bound only guards against a master that
	// neither connects nor exits (a ProxyCommand that hangs).
	limit := time.NewTimer(h.opts.ConnectTimeout + h.opts.AliveInterval*time.Duration(h.opts.AliveCount) + 2*time.Second)
	defer limit.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return m, nil
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("%w: host %s: %s", tmux.ErrHostUnreachable, h.spec.Name, reason(m.stderr.String(), m.cmd))
		case <-limit.C:
			m.stop()
			return nil, fmt.Errorf("%w: host %s: ssh did not connect within %s", tmux.ErrHostUnreachable, h.spec.Name, h.opts.ConnectTimeout)
		case <-tick.C:
		}
	}
}

// reason is a failed ssh's last message, or its exit status.
func reason(stderr string, cmd *exec.Cmd) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(stderr, "\r", "")), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	if cmd.ProcessState != nil {
		return "ssh exited with status " + strconv.Itoa(cmd.ProcessState.ExitCode())
	}
	return "ssh ended"
}

// stop ends a master (SIGTERM: ssh closes its channels and exits) and waits.
func (m *master) stop() {
	if m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-m.done:
	case <-time.After(3 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// HostState is how a host's ssh connection stands, for the metrics.
type HostState int

// The states of a host.
const (
	HostIdle HostState = iota // never connected (nothing connects before the first call), or closed
	HostUp                    // a connection master is live
	HostDown                  // its connection failed or was lost; the next call connects again
)

// State tells whether the host has a live connection, had one (or tried)
// and has none now, or never tried.
func (h *Host) State() HostState {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return HostIdle
	case slices.ContainsFunc(h.masters, (*master).alive):
		return HostUp
	case h.tried:
		return HostDown
	}
	return HostIdle
}

// PIDs returns the process ids of the live masters (tests check that none
// outlives Close).
func (h *Host) PIDs() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for _, m := range h.masters {
		if m.alive() && m.cmd.Process != nil {
			out = append(out, m.cmd.Process.Pid)
		}
	}
	return out
}

// Close stops every master (their channels end with them, and with them
// the remote tmux clients, which see EOF) and removes the directory.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	ms := h.masters
	h.masters = nil
	dir := h.dir
	h.notifyLocked()
	h.mu.Unlock()
	for _, m := range ms {
		m.stop()
	}
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	return nil
}

// Disconnect stops the masters but leaves the host usable: the next call
// connects again (tests use it to cut connections as a dropped network
// would).
func (h *Host) Disconnect() {
	h.mu.Lock()
	ms := h.masters
	h.masters = nil
	h.notifyLocked()
	h.mu.Unlock()
	for _, m := range ms {
		m.stop()
	}
}

type lockedText struct {
	mu sync.Mutex
	b  strings.Builder
}

func (t *lockedText) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.b.Len() < 8192 {
		t.b.Write(p[:min(len(p), 8192-t.b.Len())])
	}
	return len(p), nil
}

func (t *lockedText) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// Bin is the remote tmux binary.
func (h *Host) Bin() string {
	if h.spec.TmuxBin == "" {
		return "tmux"
	}
	return h.spec.TmuxBin
}

// NewRunner returns the control-mode engine for this host's tmux servers:
// one control client per remote server over a channel of a master, and
// one-off calls ("tmux source-file -") over others. The caller closes it
// before closing the host.
func (h *Host) NewRunner() *tmux.ControlRunner {
	return &tmux.ControlRunner{Bin: h.Bin(), Env: h.opts.Env, Via: h}
}

// NewWatchers returns output watchers for this host's sessions.
func (h *Host) NewWatchers() *tmux.Watchers {
	return &tmux.Watchers{Bin: h.Bin(), Env: h.opts.Env, Via: h}
}
