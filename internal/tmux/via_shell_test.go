package tmux_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// shellVia runs the remote command line the way sshd does, through a
// login shell's "-c", but on this machine: it checks that the fixed
// remote command lines mean the same to bash, zsh, dash and fish (sshd
// hands the joined words to the user's shell, whichever it is).
type shellVia struct{ shell string }

func (v shellVia) Host() string                { return "shell-" + v.shell }
func (v shellVia) StartTimeout() time.Duration { return 5 * time.Second }
func (v shellVia) Start(_ context.Context, words []string) ([]string, func(), error) {
	return []string{v.shell, "-c", strings.Join(words, " ")}, func() {}, nil
}

// TestViaUnderShells: the engine (control client with a "$N" session
// argument and the echoed start line), the one-off path (source-file -,
// with start-server ';' when a call starts a server), captures, watchers,
// and a value full of shell syntax, through each shell installed.
func TestViaUnderShells(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "dash", "fish"} {
		t.Run(sh, func(t *testing.T) {
			path, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s not installed", sh)
			}
			ts := tmuxtest.New(t)
			via := shellVia{path}
			r := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), Via: via}
			connects := 0
			r.OnConnect = func([]string) { connects++ }
			t.Cleanup(func() { _ = r.Close() })
			c := &tmux.Client{Runner: r}
			sock := tmux.Socket{Name: ts.Socket.Name}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := 0; i < 2; i++ {
				rows, err := c.Rows(ctx, sock, tmux.Command{"list-panes", "-t", "main"}, []string{"pane_id", "session_id"})
				if err != nil || len(rows) != 1 || rows[0]["pane_id"] != "%0" {
					t.Fatalf("list-panes: %v %v", rows, err)
				}
			}
			if _, live := r.Identity(sock); connects != 1 || !live {
				t.Fatalf("%d control connections, live %v", connects, live)
			}
			value := `$(touch x) ; a | b & c` + "`id`" + ` '"' {a,b} ~ * $HOME !! (x)`
			if _, err := c.Run(ctx, sock, tmux.Command{"set-buffer", "-b", "v", "--", value}); err != nil {
				t.Fatal(err)
			}
			if got := ts.MustRun("show-buffer", "-b", "v"); got != value {
				t.Fatalf("buffer %q", got)
			}
			// show-buffer runs alone after the shell's echo (tmux 3.3a
			// fails it after anything else printed); a missing buffer is
			// tmux's error, not a transport failure.
			if outs, err := c.Run(ctx, sock, tmux.Command{"show-buffer", "-b", "v"}); err != nil || string(outs[0]) != value {
				t.Fatalf("show-buffer through the shell: %q %v", outs, err)
			}
			var ce *tmux.CommandError
			if _, err := c.Run(ctx, sock, tmux.Command{"show-buffer", "-b", "absent"}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "absent") {
				t.Fatalf("show-buffer of a missing buffer: %v", err)
			}
			outs, err := c.Run(ctx, sock, tmux.Command{"capture-pane", "-p", "-t", "main", "-S", "0", "-E", "1"})
			if err != nil || strings.Count(string(outs[0]), "\n") != 2 {
				t.Fatalf("capture %q %v", outs, err)
			}
			fresh := tmuxtest.NewWith(t)
			fsock := tmux.Socket{Name: fresh.Socket.Name}
			if _, err := c.Run(ctx, fsock, tmux.Command{"new-session", "-d", "-s", "n", "-x", "20", "-y", "5"}); err != nil {
				t.Fatalf("new-session on a fresh socket: %v", err)
			}
			ws := &tmux.Watchers{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), Via: via}
			defer ws.CloseAll()
			sess := ts.MustRun("display-message", "-p", "-t", "main", "#{session_id}")
			w, err := ws.Get(sock, sess)
			if err != nil {
				t.Fatalf("watcher: %v", err)
			}
			sub := w.Subscribe("%0", "@0")
			defer sub.Close()
			ts.MustRun("send-keys", "-t", "main", "-l", "echo shell-out-ok")
			var got string
			deadline := time.After(10 * time.Second)
			for !strings.Contains(got, "shell-out-ok") {
				select {
				case <-sub.Notify():
					got += string(sub.Take())
				case <-deadline:
					t.Fatalf("no output: %q", got)
				}
			}
		})
	}
}

// TestViaSocketPathNeverClobbered: a call that starts a server at a remote
// socket path is refused, with nothing changed, when a file, a directory or
// a symlink to a file is there, or a file tmux would delete sits at the
// path plus ".lock" (the check runs on the host, through each shell); a
// path with nothing there gets its server.
func TestViaSocketPathNeverClobbered(t *testing.T) {
	for _, sh := range []string{"bash", "dash", "fish", "zsh"} {
		t.Run(sh, func(t *testing.T) {
			path, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s not installed", sh)
			}
			dir, err := os.MkdirTemp("", "vsock-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			canary := filepath.Join(dir, "canary")
			lock := filepath.Join(dir, "Cargo.lock")
			for _, f := range []string{canary, lock} {
				if err := os.WriteFile(f, []byte("keep "+f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "link")
			if err := os.Symlink(canary, link); err != nil {
				t.Fatal(err)
			}
			ts := tmuxtest.New(t)
			r := &tmux.ExecRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), Via: shellVia{path}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			newSession := tmux.Command{"new-session", "-d", "-s", "x", "sleep 60"}
			for _, p := range []string{canary, link, dir, filepath.Join(dir, "Cargo")} {
				_, err := r.Run(ctx, tmux.Socket{Path: p}, newSession)
				if !errors.Is(err, tmux.ErrUnsafeSocket) {
					t.Errorf("%s: err = %v, want a refusal", p, err)
				}
			}
			for _, f := range []string{canary, lock} {
				if b, err := os.ReadFile(f); err != nil || string(b) != "keep "+f {
					t.Fatalf("%s changed: %q %v", f, b, err)
				}
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the symlink changed: %v", err)
			}
			fresh := filepath.Join(dir, "s")
			if _, err := r.Run(ctx, tmux.Socket{Path: fresh}, newSession); err != nil {
				t.Fatalf("a free path: %v", err)
			}
			_ = exec.Command(ts.Bin, "-S", fresh, "kill-server").Run()
		})
	}
}

// TestViaCheckRemoteDirUnderShells: the fixed start-directory check means
// the same to each login shell family (csh and tcsh when installed) (the path never crosses the
// command line): directories, files, a newline the check must keep, and
// hostile names, none of which runs.
func TestViaCheckRemoteDirUnderShells(t *testing.T) {
	base := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	d := filepath.Join(base, "d")
	f := filepath.Join(base, "f")
	_ = os.WriteFile(f, nil, 0o600)
	cases := map[string]bool{d: true, d + "\n": false, f: false, filepath.Join(base, "*"): false, filepath.Join(base, "nope"): false}
	for _, h := range []string{"$(touch " + marker + ")", "`touch " + marker + "`", "'; touch " + marker + "; '",
		`"; touch ` + marker + `; "`, "(touch " + marker + ")", "x; exit 0", "!! $HOME", "nl\n"} {
		p := filepath.Join(base, "h", h)
		cases[p], cases[p+"-no"] = true, false
	}
	for p, dir := range cases {
		if dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, sh := range []string{"bash", "dash", "fish", "zsh", "csh", "tcsh"} {
		t.Run(sh, func(t *testing.T) {
			path, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s not installed", sh)
			}
			r := &tmux.ExecRunner{Env: tmuxtest.CleanEnv(), Via: shellVia{path}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for p, dir := range cases {
				err := r.CheckRemoteDir(ctx, p)
				if dir && err != nil || !dir && !errors.Is(err, tmux.ErrNotRemoteDir) {
					t.Errorf("%q: %v, want directory %v", p, err, dir)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("a hostile path ran")
			}
		})
	}
}
