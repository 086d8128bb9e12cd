package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestDoctorHTTP: doctor shows where the HTTP token is (to be generated,
// then generated) and whether a daemon answers at the configured address;
// serve --http generates the token file 0600 at the first start and
// stops on cancellation.
func TestDoctorHTTP(t *testing.T) {
	ts := tmuxtest.New(t)
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	t.Setenv("HOME", cfgDir)
	tokenPath := filepath.Join(cfgDir, "tmux-mcp", "http-token")
	env := map[string]string{"TMUX_MCP_SOCKET": ts.Socket.Name, "TMUX_MCP_TMUX_BIN": ts.Bin}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	_, out, _ := run(t, env, "--http", addr, "doctor")
	for _, want := range []string{"serve --http will generate a token into " + tokenPath, "none answers at http://" + addr + "/healthz"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor before serving lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = run(t, env, "doctor")
	if !strings.Contains(out, "http server:     not configured") {
		t.Errorf("doctor without --http:\n%s", out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, []string{"serve", "--http", addr}, strings.NewReader(""), &bytes.Buffer{}, &stderr, func(k string) string { return env[k] })
	}()
	// Main sets package state (server.Version): while it serves, doctor
	// runs directly.
	cfg, _, err := config.Load(func(k string) string { return env[k] }, map[string]string{"http": addr})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var b bytes.Buffer
		doctor(ctx, cfg, &b)
		out = b.String()
		if strings.Contains(out, "running at http://"+addr+"/mcp") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor never saw the daemon:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(out, "generated token in "+tokenPath) {
		t.Errorf("doctor while serving lacks the token path:\n%s", out)
	}
	// Issue 21 item 11: doctor run without --http (as it usually is) finds
	// the daemon too; it said "not configured" while one served.
	bare, _, err := config.Load(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	doctor(ctx, bare, &b)
	if want := "not configured here; the daemon started "; !strings.Contains(b.String(), want) ||
		!strings.Contains(b.String(), "running at http://"+addr+"/mcp") {
		t.Errorf("doctor without --http while a daemon serves:\n%s", b.String())
	}
	fi, err := os.Stat(tokenPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", fi, err)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("serve --http exit %d", c)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("serve --http did not stop")
	}
	// Stopped, it leaves no note behind.
	if ents, _ := os.ReadDir(filepath.Join(cfgDir, "tmux-mcp", "daemons")); len(ents) != 0 {
		t.Errorf("the daemon's address file outlived it: %v", ents)
	}
	_, out, _ = run(t, env, "doctor")
	if !strings.Contains(out, "no daemon of this user runs") {
		t.Errorf("doctor after the daemon stopped:\n%s", out)
	}
	tok, _ := os.ReadFile(tokenPath)
	if len(tok) < 16 || strings.Contains(stderr.String(), strings.TrimSpace(string(tok))) {
		t.Errorf("the token is in the log, or empty")
	}
	if !strings.Contains(stderr.String(), tokenPath) {
		t.Errorf("the log does not say where the token is:\n%s", stderr.String())
	}
}
