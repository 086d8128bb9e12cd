package remote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// hostile is the acting tools' hostile-input table (see
// internal/server/tools_pane_write_hostile_test.go), plus what a remote
// login shell would act on if it ever saw the value: $(...), backticks,
// ';', '&', '|', a newline followed by a command.
func hostile(marker string) map[string]string {
	return map[string]string{
		"semicolon":            ";",
		"escaped semicolon":    `\;`,
		"tmux command after":   `x ; run-shell "touch ` + marker + `" ;`,
		"format":               "#{pane_id}",
		"format job":           "#(touch " + marker + ")",
		"format job in style":  "##[#(touch " + marker + ")",
		"command substitution": "$(touch " + marker + ")",
		"backticks":            "`touch " + marker + "`",
		"shell separators":     "a; touch " + marker + " & touch " + marker + " | touch " + marker,
		"quotes":               `it's "quoted" '' "`,
		"newline command":      "line1\ntouch " + marker + "\n",
		"strftime":             "%Y-%m %% %",
		"dash t":               "-t",
		"csh history":          "!! !-1 ~root",
		"fish":                 "(touch " + marker + ") {a,b}",
		"unicode":              "héllo ✓ 日本",
		"big":                  strings.Repeat("héllo wörld ✓ 0123456789;#{x}\\; $(x) ", 1<<20/40),
	}
}

// TestRemoteHostileInput: every hostile value goes to a remote host's
// tmux through set-buffer and send-keys, over the control connection and
// over the one-off (source-file) path, and arrives exactly; nothing runs
// on either side (the marker file, on this machine, which is both sides);
// a NUL byte is refused.
func TestRemoteHostileInput(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	dir := t.TempDir()
	marker := filepath.Join(dir, "PWNED")
	typed := filepath.Join(dir, "typed")
	pane := r.ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "sh -c 'stty raw -echo && exec cat > "+typed+"'")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := r.ts.Run("display-message", "-p", "-t", pane, "#{pane_current_command}")
		_, err := os.Stat(typed)
		return err == nil && out == "cat"
	})
	paths := map[string]tmux.Runner{"control": r.runner, "one-off": r.runner.ExecFallback()}
	var want strings.Builder
	for pathName, run := range paths {
		for name, in := range hostile(marker) {
			c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			buf := "hostile-" + strings.ReplaceAll(name, " ", "-")
			if _, err := run.Run(c, r.sock, tmux.Command{"set-buffer", "-b", buf, "--", in}); err != nil {
				cancel()
				t.Fatalf("%s %s: set-buffer: %v", pathName, name, err)
			}
			got, err := r.ts.Run("show-buffer", "-b", buf)
			if err != nil || got != strings.TrimRight(in, "\n") {
				cancel()
				t.Fatalf("%s %s: stored %d bytes, want %d (%v)", pathName, name, len(got), len(in), err)
			}
			if len(in) < 64<<10 { // send-keys of one argv: a real tool chunks bigger input
				if _, err := run.Run(c, r.sock, tmux.Command{"send-keys", "-t", pane, "-l", "--", in}); err != nil {
					cancel()
					t.Fatalf("%s %s: send-keys: %v", pathName, name, err)
				}
				want.WriteString(in)
			}
			cancel()
			assertNoFile(t, marker)
		}
	}
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(typed)
		return len(b) >= len(want.String())
	})
	b, _ := os.ReadFile(typed)
	// The pane's terminal turns "\n" typed by send-keys -l into "\r".
	if got, w := string(b), want.String(); got != w {
		i := 0
		for i < len(got) && i < len(w) && got[i] == w[i] {
			i++
		}
		t.Fatalf("typed %d bytes, want %d; first difference at %d: got %q want %q", len(got), len(w), i, got[i:min(len(got), i+40)], w[i:min(len(w), i+40)])
	}
	for pathName, run := range paths {
		c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := run.Run(c, r.sock, tmux.Command{"set-buffer", "-b", "nul", "--", "a\x00touch " + marker})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Fatalf("%s: NUL accepted: %v", pathName, err)
		}
	}
	time.Sleep(200 * time.Millisecond) // a format job would run asynchronously
	assertNoFile(t, marker)
}

func assertNoFile(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("marker %s exists: a hostile input ran a command", marker)
	}
}

// TestRemoteMarkerWouldAppear proves the marker check can fail: the same
// value put on ssh's remote command line (as a naive "ssh host tmux
// set-buffer VALUE" would) is run by the remote login shell.
func TestRemoteMarkerWouldAppear(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	marker := filepath.Join(t.TempDir(), "PWNED")
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv, release, err := r.host.Start(c, []string{"exec", "tmux", "-S", r.sock.Path, "set-buffer", "--", hostile(marker)["command substitution"]})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// tmux then refuses the empty value the expansion left: only the
	// marker matters.
	_ = exec.CommandContext(c, argv[0], argv[1:]...).Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the remote shell did not run the command substitution: the marker check proves nothing")
	}
}
