// Package sshtest starts a private OpenSSH server on loopback for tests of
// remote tmux hosts, so they run against the real ssh and sshd (no Go SSH
// library, no mock): the transport under test is the system ssh.
//
// Everything it makes lives in the test's temporary directory: a host key,
// a client key authorized for the current user, an sshd_config, a client
// config (ssh -F) with its own known_hosts, and a home directory for the
// remote login shell. The machine's own ssh set-up is never read or
// changed, and sshd is killed by pid at cleanup.
//
// The remote login shell and the machine's dotfiles. sshd runs every
// remote command through the user's login shell, and Debian's bash then
// reads ~/.bashrc even for a non-interactive command (it is built with
// SSH_SOURCE_BASHRC and sees SSH_CLIENT). On the machines these tests run
// on, root's ~/.bashrc runs "pyenv init", which can hang on a stale lock.
// Neither sshd_config SetEnv of BASH_ENV nor "env -i" in the remote
// command helps: the rc file is read before the command runs. What does
// work is sshd_config "SetEnv HOME=<dir>": sshd applies the administrator's
// SetEnv after its own defaults, so it replaces HOME in the session's
// environment, and bash looks for ~/.bashrc (and fish for its config,
// csh for ~/.cshrc) under that directory, which the test owns. sshd still
// starts the session in the real home directory (it uses the password
// database for that), which does not matter here. The test can put
// dotfiles there that print banners (Server.SetRC) to check that noise
// before tmux's first control line is tolerated.
package sshtest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SSHD is the sshd binary the tests start (an absolute path: sshd refuses
// to re-execute itself otherwise).
const SSHD = "/usr/sbin/sshd"

// Server is one running sshd owned by a test.
type Server struct {
	t    testing.TB
	Dir  string // the test's directory with keys and configs
	Home string // HOME of remote sessions (empty dotfiles unless SetRC)
	Port int
	User string
	// Config is the client configuration file (ssh -F) with a Host
	// "sshtest" entry pointing at this server.
	Config string
	// Key is the authorized client key; OtherKey is a key sshd does not
	// accept.
	Key, OtherKey string
	cmd           *exec.Cmd
	sshdConfig    string
	done          chan struct{}
	log           *lockedBuffer
}

// Alias is the Host name the client config defines for the server.
const Alias = "sshtest"

// HostKeyAlias is the name known_hosts knows the server's key by, so the
// key stays known when a test points the alias at a proxy's port.
const HostKeyAlias = "sshtest-host"

// Need skips the test when ssh or sshd is not installed, and fails it
// under CI (the CI environment variable set), which installs
// openssh-server and openssh-client (.ci/run): there a missing one is a
// broken setup, not a reason to test less.
func Need(t testing.TB) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (.ci/run installs it)", why)
		}
		t.Skip(why)
	}
	if _, err := os.Stat(SSHD); err != nil {
		missing("sshd is required for this test (" + SSHD + "): install openssh-server")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		missing("ssh is required for this test: install openssh-client")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		missing("ssh-keygen is required for this test: install openssh-client")
	}
}

// Start starts sshd on a free loopback port and returns once it accepts
// connections. extra lines are appended to sshd_config (MaxSessions 2, ...);
// their SetEnv variables join the one SetEnv line sshd reads.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	Need(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// The directory must be short enough for ssh's control sockets and
	// must not be group or world writable for sshd's own checks.
	dir, err := os.MkdirTemp("", "sshtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{t: t, Dir: dir, Home: filepath.Join(dir, "home"), User: u.Username,
		Key: filepath.Join(dir, "id_client"), OtherKey: filepath.Join(dir, "id_other"),
		Config: filepath.Join(dir, "ssh_config"), log: &lockedBuffer{}}
	if err := os.Mkdir(s.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	for _, k := range []string{hostKey, s.Key, s.OtherKey} {
		keygen(t, k)
	}
	pub, err := os.ReadFile(s.Key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	auth := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(auth, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd's privilege separation directory (Debian's package makes it
	// at boot, not at install).
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755)
	}

	s.Port = freePort(t)
	cfg := []string{
		"ListenAddress 127.0.0.1",
		fmt.Sprintf("Port %d", s.Port),
		"HostKey " + hostKey,
		"AuthorizedKeysFile " + auth,
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"PermitRootLogin yes",
		"AllowUsers " + u.Username,
		"LogLevel VERBOSE",
		"PrintMotd no",
		"PrintLastLog no",
		"Banner none",
		"Subsystem sftp internal-sftp",
		// A client lost to a frozen network is dropped within ~3 s, as a
		// production sshd with keep-alives would, so the remote tmux
		// client it ran ends too (the no-leftovers checks look for it).
		"ClientAliveInterval 1",
		"ClientAliveCountMax 2",
		// The login shell reads its dotfiles from here, not from the
		// machine's home (see the package comment).
	}
	// sshd takes only the first SetEnv line, so every variable an extra
	// line sets joins HOME on one line.
	setEnv := []string{"HOME=" + s.Home}
	for _, line := range extra {
		if f := strings.Fields(line); len(f) > 1 && strings.EqualFold(f[0], "SetEnv") {
			setEnv = append(setEnv, f[1:]...)
			continue
		}
		cfg = append(cfg, line)
	}
	cfg = append(cfg, "SetEnv "+strings.Join(setEnv, " "))
	sshdConfig := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(sshdConfig, []byte(strings.Join(cfg, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.writeClientConfig()

	s.sshdConfig = sshdConfig
	t.Cleanup(s.stop)
	s.start()
	return s
}

// start starts sshd with the server's configuration and returns once it
// accepts connections.
func (s *Server) start() {
	t := s.t
	t.Helper()
	s.cmd = exec.Command(SSHD, "-D", "-e", "-f", s.sshdConfig)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting sshd: %v", err)
	}
	done := make(chan struct{})
	s.done = done
	cmd := s.cmd
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-s.done:
			t.Fatalf("sshd exited: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen within 10s: %s", s.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill kills sshd and every process it started (the per-connection sshd
// processes and the sessions' commands), by pid, as a host that crashed
// or lost its network would drop them: every connection to it ends. The
// tmux servers its sessions reached are not its children and live on.
func (s *Server) Kill() {
	s.t.Helper()
	pids := descendants(s.cmd.Process.Pid)
	_ = s.cmd.Process.Kill()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.done
}

// Restart starts sshd again on the same port with the same keys and
// configuration, after Kill.
func (s *Server) Restart() {
	s.t.Helper()
	select {
	case <-s.done:
	default:
		s.t.Fatal("sshtest: Restart without Kill")
	}
	s.start()
}

// descendants lists the processes below pid, children first (/proc).
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range procs() {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// proc is what the tests need of a process's /proc/PID/stat.
type proc struct {
	pid, ppid int
	comm      string
}

// procs lists the machine's processes from /proc: their stat's command
// sits in parentheses and may hold spaces, so the fields after it start
// at the last ')'.
func procs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(stat)
		open, end := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if open < 0 || end < open {
			continue
		}
		if f := strings.Fields(st[end+1:]); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				out = append(out, proc{pid: pid, ppid: ppid, comm: st[open+1 : end]})
			}
		}
	}
	return out
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

// Log returns what sshd logged so far (for failure messages).
func (s *Server) Log() string { return s.log.String() }

// writeClientConfig writes the ssh -F file: the alias for this server, its
// own known_hosts (filled here with the real host key under HostKeyAlias, so
// StrictHostKeyChecking stays at its default "ask", which BatchMode turns
// into a refusal for an unknown or changed key), and no agent or
// password.
func (s *Server) writeClientConfig() {
	s.t.Helper()
	hostPub, err := os.ReadFile(filepath.Join(s.Dir, "host_ed25519.pub"))
	if err != nil {
		s.t.Fatal(err)
	}
	fields := strings.Fields(string(hostPub))
	known := fmt.Sprintf("%s %s %s\n", HostKeyAlias, fields[0], fields[1])
	if err := os.WriteFile(s.KnownHosts(), []byte(known), 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.WriteHostConfig(Alias, s.Port, s.Key)
}

// KnownHosts is the client's known_hosts file.
func (s *Server) KnownHosts() string { return filepath.Join(s.Dir, "known_hosts") }

// WriteHostConfig (re)writes the client config with one alias pointing at
// port on loopback with the given identity; tests use it to point the
// alias at a proxy or at a refused key. Other aliases are dropped.
func (s *Server) WriteHostConfig(alias string, port int, key string) {
	s.t.Helper()
	conf := fmt.Sprintf(`Host %s
	HostName 127.0.0.1
	Port %d
	User %s
	IdentityFile %s
	IdentitiesOnly yes
	HostKeyAlias %s
	IdentityAgent none
	UserKnownHostsFile %s
	GlobalKnownHostsFile /dev/null
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	LogLevel INFO
`, alias, port, s.User, key, HostKeyAlias, s.KnownHosts())
	if err := os.WriteFile(s.Config, []byte(conf), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// SSHCommand is the ssh invocation a test passes as TMUX_MCP_SSH_COMMAND.
func (s *Server) SSHCommand() []string { return []string{"ssh", "-F", s.Config} }

// SetRC writes the remote login shell's ~/.bashrc (and fish's config and
// ~/.cshrc) under Home, e.g. a banner line.
func (s *Server) SetRC(text string) {
	s.t.Helper()
	fishDir := filepath.Join(s.Home, ".config", "fish")
	_ = os.MkdirAll(fishDir, 0o700)
	for _, f := range []string{filepath.Join(s.Home, ".bashrc"), filepath.Join(s.Home, ".cshrc"), filepath.Join(fishDir, "config.fish")} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
}

// stop kills sshd by pid. Sessions it forked are its children and end
// with their connections; each test also closes its own clients.
func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

func keygen(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() < 1<<20 {
		b.b.Write(p)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Proxy is a loopback TCP proxy in front of a server that a test can
// freeze: while frozen it stops moving bytes in both directions without
// closing anything, as a network that silently drops packets would.
type Proxy struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	frozen bool
	thaw   chan struct{}
	conns  []net.Conn
	closed bool
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, target: target, thaw: make(chan struct{})}
	close(p.thaw)
	t.Cleanup(p.Close)
	go p.accept()
	return p
}

// Port is the proxy's listening port.
func (p *Proxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// Freeze stops all traffic (connections stay open).
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		p.thaw = make(chan struct{})
	}
}

// Thaw lets traffic flow again.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.frozen = false
		close(p.thaw)
	}
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	p.Thaw()
	p.l.Close()
	for _, c := range conns {
		c.Close()
	}
}

func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.thaw
}

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst in small chunks, holding each chunk while the
// proxy is frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

// Children lists this process's child processes named ssh (from /proc):
// the tests check that no ssh of ours outlives what started it.
func Children() []string {
	me := os.Getpid()
	var out []string
	for _, p := range procs() {
		if p.ppid == me && p.comm == "ssh" {
			out = append(out, strconv.Itoa(p.pid))
		}
	}
	return out
}

// KillWatchers kills, by pid, this process's ssh children that carry a
// watcher's control client (their command line holds its pause-after
// flag), as a dropped connection would end them, and reports how many.
func KillWatchers() int {
	killed := 0
	for _, p := range Children() {
		if cmd, _ := os.ReadFile("/proc/" + p + "/cmdline"); strings.Contains(string(cmd), "pause-after") {
			pid, _ := strconv.Atoi(p)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed++
		}
	}
	return killed
}
