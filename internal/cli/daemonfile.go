package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// Daemon files. doctor is usually run without --http, in a shell that
// does not know how the user's daemon was started, and used to say "not
// configured" while one served. So serve --http leaves a note of where it
// listens, one file per process under the user's config directory (next
// to the generated token: <dir>/tmux-mcp/daemons/<pid>.json, 0600 in a
// 0700 directory), and removes it when it stops. doctor reads the notes of
// live processes and asks each address's /healthz; a note whose process is
// gone (the daemon was killed) is ignored.

// daemonNote is what a daemon file holds.
type daemonNote struct {
	PID     int    `json:"pid"`
	URL     string `json:"url"` // the MCP endpoint, http(s)://host:port/mcp
	Started string `json:"started"`
}

// daemonDir is where the daemon files are.
func daemonDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "tmux-mcp", "daemons"), nil
}

// noteDaemon writes this process's daemon file for endpoint; the returned
// func removes it. A file that cannot be written costs only doctor's
// answer, so it is logged by the caller, never fatal.
func noteDaemon(endpoint string) (remove func(), err error) {
	dir, err := daemonDir()
	if err != nil {
		return func() {}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, err
	}
	b, _ := json.Marshal(daemonNote{PID: os.Getpid(), URL: endpoint, Started: time.Now().UTC().Format(time.RFC3339)})
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return func() {}, err
	}
	return func() { _ = os.Remove(path) }, nil
}

// runningDaemons reads the daemon files of live processes, oldest first.
func runningDaemons() []daemonNote {
	dir, err := daemonDir()
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir(dir)
	var out []daemonNote
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil || !strings.HasSuffix(e.Name(), ".json") || !processAlive(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		var n daemonNote
		if err != nil || json.Unmarshal(b, &n) != nil || n.PID != pid {
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started < out[j].Started })
	return out
}

// processAlive reports whether a process pid exists (signal 0).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}

// doctorDaemons says which daemons of this user answer, for a doctor run
// without --http; false when none does.
func doctorDaemons(ctx context.Context, say func(label, format string, args ...any)) bool {
	found := false
	for _, n := range runningDaemons() {
		u, err := url.Parse(n.URL)
		if err != nil || u.Host == "" {
			continue
		}
		h := config.HTTP{Addr: u.Host}
		if u.Scheme == "https" {
			h.TLSCert = "(its own)" // probeHealth then speaks TLS and checks liveness only
		}
		say("http server", "not configured here; the daemon started %s (pid %d): %s", n.Started, n.PID, probeHealth(ctx, h))
		found = true
	}
	return found
}
