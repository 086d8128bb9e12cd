package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// recordingReply is the part of record_pane's answer these tests read.
type recordingReply struct {
	RecordingID string  `json:"recording_id"`
	URI         string  `json:"uri"`
	OutputPath  string  `json:"output_path"`
	Recording   bool    `json:"recording"`
	StopReason  *string `json:"stop_reason"`
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return res
}

// castLines checks a recording line by line (a v2 header, then whole
// [time, kind, data] lines with times that never go back) and returns its
// events.
func castLines(t *testing.T, path string) [][3]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		t.Fatalf("%s does not end with a whole line", path)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	var evs [][3]any
	last := 0.0
	for n := 0; sc.Scan(); n++ {
		if n == 0 {
			var h struct{ Version, Width, Height int }
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Version != 2 || h.Width == 0 || h.Height == 0 {
				t.Fatalf("header %q: %v", sc.Bytes(), err)
			}
			continue
		}
		var ev [3]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d %q: %v", n+1, sc.Bytes(), err)
		}
		tm, ok1 := ev[0].(float64)
		_, ok2 := ev[1].(string)
		_, ok3 := ev[2].(string)
		if !ok1 || !ok2 || !ok3 || tm < last {
			t.Fatalf("line %d %q", n+1, sc.Bytes())
		}
		last = tm
		evs = append(evs, ev)
	}
	return evs
}

// catInPane plays a recording with `asciinema cat` in a new pane of ts
// (asciinema needs a terminal) and returns what the pane shows after.
func catInPane(t *testing.T, ts *tmuxtest.Server, file string) string {
	t.Helper()
	bin, err := exec.LookPath("asciinema")
	if err != nil {
		missing(t, "asciinema is not installed")
	}
	pane := ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-x", "80", "-y", "24",
		"sh", "-c", `"$0" cat "$1" || echo "asciinema cat failed: $?"; tmux set-option -p @replayed 1; exec sleep 600`, bin, file)
	tmuxtest.WaitFor(t, 20*time.Second, func() bool {
		out, _ := ts.Run("display-message", "-p", "-t", pane, "#{@replayed}")
		return out == "1"
	})
	return ts.MustRun("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
}

// TestRecordingCompleteAfterSIGTERM: the built binary records a pane over
// stdio; SIGTERM ends it (as a client closing it does), and the file is a
// whole recording whose last line says tmux-mcp exited, which asciinema
// plays.
func TestRecordingCompleteAfterSIGTERM(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := ts.Run("capture-pane", "-p", "-t", "%0")
		return strings.Contains(out, "#") || strings.Contains(out, "$")
	})
	cmd := serverCmd(ts)
	cs := connect(t, cmd)
	file := filepath.Join(t.TempDir(), "sigterm.cast")
	var rec recordingReply
	if res := callJSON(t, cs, "record_pane", map[string]any{"pane_id": "%0", "output_path": file}, &rec); res.IsError || !rec.Recording {
		t.Fatalf("record_pane: %+v %+v", res, rec)
	}
	if res := callJSON(t, cs, "send_keys", map[string]any{"pane_id": "%0", "keys": "printf 'recorded-%s\\n' $((6*7))"}, nil); res.IsError {
		t.Fatalf("send_keys: %+v", res)
	}
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		raw, _ := os.ReadFile(file)
		return bytes.Contains(raw, []byte(`recorded-42\r\n`))
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end within 10 s of SIGTERM")
	}
	evs := castLines(t, file)
	last := evs[len(evs)-1]
	if last[1] != "m" || last[2] != "recording stopped: tmux-mcp exited" {
		t.Fatalf("last line %v, want the marker of tmux-mcp's exit", last)
	}
	shown := catInPane(t, ts, file)
	if strings.Contains(shown, "asciinema cat failed") || !strings.Contains(shown, "recorded-42") {
		t.Errorf("asciinema cat of the recording shows:\n%s", shown)
	}
}

// TestRecordingIdentitiesOverHTTP: over HTTP with two tokens, a recording
// is the token's: the other token's client neither lists, reads nor stops
// it, and a new session of the same token reads it.
func TestRecordingIdentitiesOverHTTP(t *testing.T) {
	ts := tmuxtest.New(t)
	dir := t.TempDir()
	alice, bob := newToken(), newToken()
	h := startHTTPD(t, ts, []string{"--tokens-file", writeTokensFile(t, dir, []string{alice, bob}, []string{"alice", "bob"})})
	ctx := context.Background()
	dial := func(token string) *mcp.ClientSession {
		cs, err := dialHTTPD(ctx, h, token, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := dial(alice), dial(bob)
	var rec recordingReply
	if res := callJSON(t, a, "record_pane", map[string]any{"pane_id": "%0", "output_path": filepath.Join(dir, "alice.cast")}, &rec); res.IsError {
		t.Fatalf("record_pane: %v", res.Content)
	}
	var listed struct {
		Result []recordingReply `json:"result"`
	}
	callJSON(t, b, "list_recordings", map[string]any{}, &listed)
	if len(listed.Result) != 0 {
		t.Errorf("bob lists %+v", listed.Result)
	}
	if _, err := b.ReadResource(ctx, &mcp.ReadResourceParams{URI: rec.URI}); err == nil {
		t.Error("bob reads alice's recording")
	}
	if res := callJSON(t, b, "record_pane", map[string]any{"pane_id": "%0", "output_path": nil}, nil); !res.IsError {
		t.Error("bob stopped alice's recording")
	}
	a.Close()
	a2 := dial(alice)
	res, err := a2.ReadResource(ctx, &mcp.ReadResourceParams{URI: rec.URI})
	if err != nil || !strings.HasPrefix(res.Contents[0].Text, `{"version":2,`) {
		t.Fatalf("alice's new session reads %v %v", res, err)
	}
	callJSON(t, a2, "list_recordings", map[string]any{}, &listed)
	if len(listed.Result) != 1 || listed.Result[0].RecordingID != rec.RecordingID || !listed.Result[0].Recording {
		t.Errorf("alice's new session lists %+v", listed.Result)
	}
	callJSON(t, a2, "record_pane", map[string]any{"pane_id": "%0", "output_path": nil}, &rec)
	if rec.Recording || rec.StopReason == nil {
		t.Errorf("alice's stop: %+v", rec)
	}
	castLines(t, rec.OutputPath)
}
