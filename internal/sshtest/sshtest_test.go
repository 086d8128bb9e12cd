package sshtest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestLoginShellUsesTestHome: the remote login shell reads its rc file from
// the test's home (SetEnv HOME), never the machine's, so a hanging or noisy
// ~/.bashrc on the machine cannot affect the tests.
// A variable an extra SetEnv line sets reaches the session as well.
func TestLoginShellUsesTestHome(t *testing.T) {
	s := Start(t, "SetEnv TMUXMCP_PROBE=from-extra")
	s.SetRC("echo banner-from-test-rc\n")
	argv := append(s.SSHCommand(), "-T", "-o", "BatchMode=yes", Alias, "echo", "home=$HOME", "probe=$TMUXMCP_PROBE")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v: %s\nsshd: %s", err, out, s.Log())
	}
	got := string(out)
	if !strings.Contains(got, "banner-from-test-rc\n") || !strings.Contains(got, "home="+s.Home+" probe=from-extra\n") {
		t.Fatalf("remote shell output %q: want the test rc's banner, HOME=%s and the extra SetEnv's variable", got, s.Home)
	}
}

// TestProxyFreeze: a frozen proxy moves no bytes until thawed.
func TestProxyFreeze(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Addr())
	s.WriteHostConfig(Alias, p.Port(), s.Key)
	run := func() (string, error) {
		argv := append(s.SSHCommand(), "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=2", Alias, "echo", "ok")
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("through the proxy: %q %v", out, err)
	}
	p.Freeze()
	start := time.Now()
	if out, err := run(); err == nil {
		t.Fatalf("frozen proxy let ssh through: %q", out)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("frozen proxy failed fast (%v), not by timeout", d)
	}
	p.Thaw()
	if out, err := run(); err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("after thaw: %q %v", out, err)
	}
}
