package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// doctorHosts checks each configured remote host: reachable over ssh, the
// tmux version there, the server on its socket, and the latency of one
// control-mode round trip. It reports false when a host has a problem.
func doctorHosts(ctx context.Context, cfg config.Config, say func(label, format string, args ...any)) bool {
	if len(cfg.Hosts) == 0 {
		say("remote hosts", "none%s", " (from "+orDash(cfg.From["hosts"])+")")
		return true
	}
	ok := true
	for _, hc := range cfg.Hosts {
		label := "host " + hc.Name
		if err := doctorHost(ctx, cfg, hc, func(format string, args ...any) { say(label, format, args...) }); err != nil {
			ok = false
		}
	}
	return ok
}

func doctorHost(ctx context.Context, cfg config.Config, hc config.Host, say func(format string, args ...any)) error {
	h, err := remote.New(hc.Spec(), remote.Options{SSHCommand: cfg.SSHCommand})
	if err != nil {
		say("invalid: %v", err)
		return err
	}
	defer h.Close()
	runner := h.NewRunner()
	defer runner.Close()

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	ver, err := remoteVersion(cctx, h)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "Host key verification failed"):
			say("UNREACHABLE: %v\n%17sthe host key of %s is unknown or changed: run `ssh %s` once to check and accept it", err, "", hc.Destination, hc.Destination)
		case errors.Is(err, tmux.ErrTmuxMissing):
			say("reachable (%s), but tmux does not run there: %v", hc.Destination, err)
		default:
			say("UNREACHABLE: %v", err)
		}
		return err
	}
	connect := time.Since(start)
	sock := h.Socket(tmux.Socket{})
	client := &tmux.Client{Runner: runner}
	rows, err := client.Rows(cctx, sock, tmux.Command{"list-sessions"}, []string{"session_name"})
	var server string
	switch {
	case err == nil:
		// A second call measures one round trip on the connection the
		// first one opened.
		t0 := time.Now()
		_, err = client.Rows(cctx, sock, tmux.Command{"list-sessions"}, []string{"session_name"})
		rtt := time.Since(t0)
		server = fmt.Sprintf("server running, %d session(s), round trip %s", len(rows), rtt.Round(10*time.Microsecond))
		if err != nil {
			server = "server running, but the second call failed: " + err.Error()
		}
	case errors.Is(err, tmux.ErrNoServer):
		server = "no server on this socket"
	default:
		server = "server error: " + err.Error()
	}
	if tooOld(ver) {
		say("reachable (%s), %s: too old, tmux-mcp needs tmux 3.2 or newer; socket %s; %s", hc.Destination, ver, sock, server)
		return errors.New("tmux too old")
	}
	say("reachable (%s, connect %s), %s, socket %s; %s", hc.Destination, connect.Round(time.Millisecond), ver, sock, server)
	return nil
}

// remoteVersion runs "tmux -V" on the host (fixed, validated words) and
// returns the line that reports it, skipping whatever the login shell
// printed first.
func remoteVersion(ctx context.Context, h *remote.Host) (string, error) {
	argv, release, err := h.Start(ctx, []string{"exec", h.Bin(), "-V"})
	if err != nil {
		return "", err
	}
	defer release()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if err == nil && strings.HasPrefix(last, "tmux ") {
		return last, nil
	}
	why := strings.TrimSpace(stderr.String())
	if i := strings.LastIndexByte(why, '\n'); i >= 0 {
		why = why[i+1:]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && (ee.ExitCode() == 126 || ee.ExitCode() == 127) {
		return "", fmt.Errorf("%w: %s on host %s (%s)", tmux.ErrTmuxMissing, h.Bin(), h.Host(), why)
	}
	if why == "" {
		why = fmt.Sprintf("%v", err)
	}
	return "", fmt.Errorf("host %s: tmux -V: %s", h.Host(), why)
}
