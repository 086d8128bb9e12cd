package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// castEvent is one event line of an asciicast v2 file.
type castEvent struct {
	T    float64
	Kind string
	Data string
}

// castHeader is the header line's fields the tests read.
type castHeader struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Env       map[string]string `json:"env"`
}

// readCast parses a recording as asciicast v2 strictly: a header line of
// version 2 with the size, then lines that are each a JSON array of a
// number, a one-letter kind and a string, with times that never go back,
// every line ending in a newline.
func readCast(t testing.TB, path string) (castHeader, []castEvent) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		t.Fatalf("%s does not end with a whole line: %q", path, tail(raw, 200))
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	var h castHeader
	var evs []castEvent
	for n := 0; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 0 {
			if err := json.Unmarshal(line, &h); err != nil || h.Version != 2 || h.Width <= 0 || h.Height <= 0 {
				t.Fatalf("header %q: %v", line, err)
			}
			continue
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(line, &parts); err != nil || len(parts) != 3 {
			t.Fatalf("line %d is not [time, kind, data]: %q (%v)", n+1, line, err)
		}
		var ev castEvent
		if json.Unmarshal(parts[0], &ev.T) != nil || json.Unmarshal(parts[1], &ev.Kind) != nil || json.Unmarshal(parts[2], &ev.Data) != nil {
			t.Fatalf("line %d: bad fields: %q", n+1, line)
		}
		if !strings.Contains("oirm", ev.Kind) || len(ev.Kind) != 1 {
			t.Fatalf("line %d: kind %q", n+1, ev.Kind)
		}
		if len(evs) > 0 && ev.T < evs[len(evs)-1].T {
			t.Fatalf("line %d: time %v goes back from %v", n+1, ev.T, evs[len(evs)-1].T)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return h, evs
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// firstEvent is the index of the first event of kind whose data holds
// sub, after index from; -1 if none.
func firstEvent(evs []castEvent, from int, kind, sub string) int {
	for i := max(from, 0); i < len(evs); i++ {
		if evs[i].Kind == kind && strings.Contains(evs[i].Data, sub) {
			return i
		}
	}
	return -1
}

// paneScreen is what a pane shows: its capture with styles, trailing
// blanks kept (-e -N), and its cursor (x,y,shown).
func paneScreen(t testing.TB, ts *tmuxtest.Server, pane string) (string, string) {
	t.Helper()
	out := ts.MustRun("capture-pane", "-p", "-e", "-N", "-t", pane, ";", "display-message", "-p", "-t", pane,
		"@@cursor #{cursor_x},#{cursor_y},#{cursor_flag}")
	screen, cursor, _ := strings.Cut(out, "@@cursor ")
	return strings.TrimRight(screen, "\n"), strings.TrimSpace(cursor)
}

// replay plays a recording with `asciinema cat` in a new w x h pane of ts
// and returns the pane once everything is printed.
func replay(t testing.TB, ts *tmuxtest.Server, file string, w, h int) string {
	t.Helper()
	bin := needProgram(t, "asciinema")
	pane := ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh", "-c", `"$0" cat "$1" || echo "asciinema cat failed: $?"; tmux set-option -p @replayed 1; exec sleep 600`, bin, file)
	tmuxtest.WaitFor(t, 20*time.Second, func() bool {
		out, _ := ts.Run("display-message", "-p", "-t", pane, "#{@replayed}")
		return out == "1"
	})
	return pane
}

// recordingOf calls record_pane and returns its answer.
func recordingOf(e *env, args map[string]any) RecordingInfo {
	e.t.Helper()
	var ri RecordingInfo
	e.ok("record_pane", args, &ri)
	return ri
}

// writeProgram writes a python3 program into the test's directory.
func writeProgram(t testing.TB, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// near reports whether got is want within 50 ms.
func near(got, want float64) bool { return math.Abs(got-want) <= 0.050 }

// TestRecordPrintPauseResize records a program that prints, pauses and
// has its window resized: the file is asciicast v2 with the pane's size in
// its header, the typed command as an input event, each pause as the gap
// between output events (within 50 ms), the resize as an "r" event where
// it happened, and `asciinema cat` of it shows what the pane showed.
func TestRecordPrintPauseResize(t *testing.T) {
	needProgram(t, "asciinema")
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	waitShell(t, e.tmux, "%0")
	prog := writeProgram(t, `import subprocess, sys, time
def out(s):
    sys.stdout.write(s)
    sys.stdout.flush()
out("first line\n")
time.sleep(0.4)
out("second line\n")
time.sleep(0.7)
subprocess.run(["tmux", "resize-window", "-x", "60", "-y", "20"], check=True)
time.sleep(0.3)
out("\x1b[1;32mthird\x1b[0m line, caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87\n".encode("latin-1").decode("utf-8"))
time.sleep(0.5)
out("done\n")
`)
	file := filepath.Join(t.TempDir(), "rec.cast")
	ri := recordingOf(e, map[string]any{"pane_id": "%0", "output_path": file})
	if !ri.Recording || ri.OutputPath != file || ri.Width != 80 || ri.Height != 24 || ri.URI != "tmux://recordings/"+ri.RecordingID {
		t.Fatalf("record_pane answered %+v", ri)
	}
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "python3 " + prog}, nil)
	tmuxWait(t, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
		return strings.Contains(out, "done")
	})
	tmuxWait(t, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
		return strings.HasSuffix(strings.TrimRight(out, "\n "), "#") || strings.HasSuffix(strings.TrimRight(out, "\n "), "$")
	})
	// What the pane printed, history included, wrapped lines joined: a
	// replay that never resizes wraps and scrolls its lines where they
	// fall, so only the text and its styles, line by line, can compare.
	printed := func(pane string) string {
		out := e.tmux.MustRun("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", pane)
		return strings.TrimRight(out, "\n")
	}
	want := printed("%0")
	stopped := recordingOf(e, map[string]any{"pane_id": "%0", "output_path": nil})
	if stopped.Recording || stopped.StopReason == nil || *stopped.StopReason != "stopped (output_path=null)" || stopped.RecordingID != ri.RecordingID {
		t.Fatalf("stop answered %+v", stopped)
	}

	h, evs := readCast(t, file)
	if os.Getenv("TMUX_MCP_TEST_SHOW_CAST") != "" {
		raw, _ := os.ReadFile(file)
		t.Logf("%s:\n%s", file, raw)
	}
	if h.Width != 80 || h.Height != 24 || h.Timestamp == 0 {
		t.Errorf("header %+v", h)
	}
	if evs[0].T != 0 || evs[0].Kind != "o" {
		t.Errorf("the first event is not the screen at time 0: %+v", evs[0])
	}
	in := firstEvent(evs, 0, "i", "python3 "+prog+"\r")
	first := firstEvent(evs, in, "o", "first line")
	second := firstEvent(evs, first, "o", "second line")
	resize := firstEvent(evs, second, "r", "60x20")
	third := firstEvent(evs, resize, "o", "third")
	done := firstEvent(evs, third, "o", "done")
	if in < 0 || first < 0 || second < 0 || resize < 0 || third < 0 || done < 0 {
		t.Fatalf("events out of order or missing (input %d, first %d, second %d, resize %d, third %d, done %d):\n%v", in, first, second, resize, third, done, evs)
	}
	if !strings.Contains(evs[third].Data, "café 中文") {
		t.Errorf("UTF-8 output %q", evs[third].Data)
	}
	gaps := []struct {
		name      string
		from, to  int
		want      float64
		tolerance float64
	}{
		{"first -> second (sleep 0.4)", first, second, 0.4, 0},
		{"second -> resize (sleep 0.7, then tmux resize-window)", second, resize, 0.7, 0},
		{"resize -> third (sleep 0.3)", resize, third, 0.3, 0},
		{"third -> done (sleep 0.5)", third, done, 0.5, 0},
	}
	for _, g := range gaps {
		got := evs[g.to].T - evs[g.from].T
		t.Logf("%s: %.3f s", g.name, got)
		if !near(got, g.want) {
			t.Errorf("%s: gap %.3f s, want %.3f ± 0.050", g.name, got, g.want)
		}
	}
	last := evs[len(evs)-1]
	if last.Kind != "m" || last.Data != "recording stopped: stopped (output_path=null)" {
		t.Errorf("last event %+v", last)
	}

	// asciinema cat in a pane of the final size prints what the pane
	// printed.
	rp := replay(t, e.tmux, file, 60, 20)
	if got := printed(rp); got != want {
		t.Errorf("asciinema cat prints\n%s\nthe pane printed\n%s", got, want)
	}
}

// settled waits until a pane's screen stops changing (a program has
// finished drawing) and returns it with its cursor.
func settled(t testing.TB, ts *tmuxtest.Server, pane string) (string, string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(150 * time.Millisecond)
		s, c := paneScreen(t, ts, pane)
		if s+c == last || time.Now().After(deadline) {
			return s, c
		}
		last = s + c
	}
}

// TestRecordFullScreen records vim: one recording starts while vim shows
// a file over a styled shell screen and ends in a visual selection;
// another starts there and ends after vim quits, when the normal screen
// comes back. `asciinema cat` of each, played in a pane of the same size,
// leaves exactly the screen (styles, trailing blanks, cursor) the pane
// showed when the recording stopped: the first frame carried the alternate
// screen, the screen under it and the cursor to come back to.
func TestRecordFullScreen(t *testing.T) {
	needProgram(t, "asciinema")
	needProgram(t, "vim")
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	waitShell(t, e.tmux, "%0")
	dir := t.TempDir()
	src := filepath.Join(dir, "calc.go")
	if err := os.WriteFile(src, []byte("package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.tmux.MustRun("send-keys", "-t", "%0", "-l", `printf '\033[1;31mred\033[0m \033[44mblue bg\033[0m   \n'; vim -u NONE -i NONE -N -n -c 'syntax on' `+src)
	e.tmux.MustRun("send-keys", "-t", "%0", "Enter")
	tmuxWait(t, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
		return strings.Contains(out, `"calc.go"`) || strings.Contains(out, "calc.go\" ")
	})
	settled(t, e.tmux, "%0")

	for _, step := range []struct {
		name string
		keys []map[string]any
		done string
	}{
		{"in vim", []map[string]any{{"keys": "3G", "enter": false}, {"keys": "V", "enter": false}, {"keys": "2j", "enter": false}}, "-- VISUAL LINE --"},
		{"vim quits", []map[string]any{{"keys": "Escape", "enter": false}, {"keys": ":q!", "enter": true}}, "blue bg"},
	} {
		t.Run(step.name, func(t *testing.T) {
			e := e.with(t)
			file := filepath.Join(dir, strings.ReplaceAll(step.name, " ", "-")+".cast")
			ri := recordingOf(e, map[string]any{"pane_id": "%0", "output_path": file})
			for _, k := range step.keys {
				k["pane_id"] = "%0"
				e.ok("send_keys", k, nil)
			}
			tmuxWait(t, func() bool {
				out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
				return strings.Contains(out, step.done)
			})
			want, wantCursor := settled(t, e.tmux, "%0")
			recordingOf(e, map[string]any{"pane_id": "%0", "output_path": nil})
			_, evs := readCast(t, file)
			if firstEvent(evs, 0, "i", "") < 0 {
				t.Errorf("no input events in %s", ri.OutputPath)
			}
			rp := replay(t, e.tmux, file, 80, 24)
			got, gotCursor := paneScreen(t, e.tmux, rp)
			if got != want || gotCursor != wantCursor {
				t.Errorf("asciinema cat leaves\n%s\n(cursor %s); the pane showed\n%s\n(cursor %s)", got, gotCursor, want, wantCursor)
			}
		})
	}
}

// TestRecordInput: what the tools type into a recorded pane is there as
// input events, each as the program reads it (send_keys, a key name,
// paste_text and paste_buffer with newlines as carriage returns,
// run_command's command as a person would type it, send_and_wait), and
// secret input is not: only a marker says something was typed, and the
// secret is nowhere in the file. A call refused before typing records
// nothing.
func TestRecordInput(t *testing.T) {
	e := newEnv(t)
	pane := e.tmux.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", "bash --norc --noprofile")
	waitShell(t, e.tmux, pane)
	file := filepath.Join(t.TempDir(), "input.cast")
	recordingOf(e, map[string]any{"pane_id": pane, "output_path": file})
	e.ok("send_keys", map[string]any{"pane_id": pane, "keys": "echo typed-1"}, nil)
	e.ok("send_keys", map[string]any{"pane_id": pane, "keys": "C-l", "enter": false}, nil)
	e.ok("paste_text", map[string]any{"pane_id": pane, "text": "echo pasted-2\n", "bracket": false}, nil)
	var buf BufferRef
	e.ok("load_buffer", map[string]any{"content": "echo buffer-3\n", "logical_name": "rec"}, &buf)
	e.ok("paste_buffer", map[string]any{"pane_id": pane, "buffer_name": buf.BufferName, "bracket": false}, nil)
	var run RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": pane, "command": "echo run-$((2*2))", "timeout": 10}, &run)
	if strings.Join(run.Output, "|") != "run-4" {
		t.Fatalf("run_command: %+v", run)
	}
	var sw SendAndWaitResult
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": "read -s -p 'Password: ' pw; echo; echo length-${#pw}", "timeout": 10}, &sw)
	if sw.Prompt != "Password: " || !sw.Foreground.Secret {
		t.Fatalf("the password prompt: %+v", sw)
	}
	const secret = "hunter2-xyzzy-SECRET"
	e.fail("send_and_wait", map[string]any{"pane_id": pane, "keys": secret, "timeout": 10}) // not marked secret: refused
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": secret, "secret": true, "timeout": 10}, &sw)
	if strings.Join(sw.Output, "|") != "length-20" {
		t.Fatalf("the secret's answer: %+v", sw)
	}
	recordingOf(e, map[string]any{"pane_id": pane, "output_path": nil})

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("hunter2")) {
		t.Fatalf("the secret is in the recording:\n%s", raw)
	}
	_, evs := readCast(t, file)
	var inputs []string
	for _, ev := range evs {
		if ev.Kind == "i" {
			inputs = append(inputs, ev.Data)
		}
	}
	want := []string{"echo typed-1\r", "\x0c", "echo pasted-2\r", "echo buffer-3\r", "echo run-$((2*2))\r",
		"read -s -p 'Password: ' pw; echo; echo length-${#pw}\r"}
	if strings.Join(inputs, "\n") != strings.Join(want, "\n") {
		t.Errorf("input events\n got %q\nwant %q", inputs, want)
	}
	// Each input comes before the output it causes (its echo, its answer).
	for _, w := range []struct{ in, out string }{{"echo typed-1\r", "typed-1"}, {"echo pasted-2\r", "pasted-2"},
		{"echo buffer-3\r", "buffer-3"}, {"echo run-$((2*2))\r", "run-4"}} {
		in, out := firstEvent(evs, 0, "i", w.in), firstEvent(evs, 0, "o", w.out)
		if in < 0 || out < in {
			t.Errorf("input %q at %d, its output at %d", w.in, in, out)
		}
	}
	pw := firstEvent(evs, 0, "o", "Password: ")
	mark := firstEvent(evs, pw, "m", "secret input typed (not recorded)")
	if pw < 0 || mark < 0 || firstEvent(evs, mark, "o", "length-20") < 0 {
		t.Errorf("no secret marker between the prompt and the answer: prompt %d, marker %d", pw, mark)
	}
}

// waitStopped waits until list_recordings says the recording stopped and
// returns its entry.
func waitStopped(t *testing.T, e *env, id string) RecordingInfo {
	t.Helper()
	var got RecordingInfo
	tmuxtest.WaitFor(t, 15*time.Second, func() bool {
		var list []RecordingInfo
		e.list("list_recordings", map[string]any{}, &list)
		for _, r := range list {
			if r.RecordingID == id {
				got = r
				return !r.Recording
			}
		}
		return false
	})
	return got
}

// TestRecordStops: a recording ends on its own when its pane closes, its
// window closes, its program exits (pane kept by remain-on-exit), its tmux
// server exits, a limit is reached, a new recording of the pane replaces
// it, or tmux-mcp closes; each time the file is whole and its last line
// is the marker naming why, which list_recordings reports too.
func TestRecordStops(t *testing.T) {
	tests := []struct {
		name   string
		opts   []envOption
		setup  func(e *env) string // the pane to record
		act    func(e *env, pane string, ri RecordingInfo)
		reason string
		check  func(t *testing.T, evs []castEvent, file string)
	}{
		{name: "pane killed", setup: func(e *env) string {
			return e.tmux.MustRun("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sh")
		}, act: func(e *env, pane string, _ RecordingInfo) { e.tmux.MustRun("kill-pane", "-t", pane) }, reason: "pane closed"},
		{name: "window closed", setup: func(e *env) string {
			return e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "sh")
		}, act: func(e *env, pane string, _ RecordingInfo) { e.tmux.MustRun("kill-window", "-t", pane) }, reason: "pane closed"},
		{name: "program exits, pane kept", setup: func(e *env) string {
			p := e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "sh")
			e.tmux.MustRun("set-option", "-p", "-t", p, "remain-on-exit", "on")
			return p
		}, act: func(e *env, pane string, _ RecordingInfo) {
			e.ok("send_keys", map[string]any{"pane_id": pane, "keys": "exit 3"}, nil)
		}, reason: "pane's program exited"},
		{name: "tmux server exits", setup: func(e *env) string { return "%0" },
			act: func(e *env, pane string, _ RecordingInfo) { e.tmux.MustRun("kill-server") }, reason: "tmux server exited"},
		{name: "size limit", opts: []envOption{withConfig(func(c *configT) { c.RecordMaxBytes = 4096 })},
			setup: func(e *env) string { return "%0" },
			act: func(e *env, pane string, _ RecordingInfo) {
				e.ok("send_keys", map[string]any{"pane_id": pane, "keys": "seq 1 3000"}, nil)
			}, reason: "size limit reached (4096 bytes)",
			check: func(t *testing.T, evs []castEvent, file string) {
				if st, _ := os.Stat(file); st.Size() > 4096 {
					t.Errorf("file of %d bytes, over the 4096-byte limit", st.Size())
				}
			}},
		{name: "duration limit", opts: []envOption{withConfig(func(c *configT) { c.RecordMaxDuration = time.Second })},
			setup: func(e *env) string { return "%0" },
			act:   func(e *env, pane string, _ RecordingInfo) {}, reason: "duration limit reached",
			check: func(t *testing.T, evs []castEvent, file string) {
				if last := evs[len(evs)-1]; last.T != 1 {
					t.Errorf("the duration limit's marker is at %v s, want 1", last.T)
				}
			}},
		{name: "replaced", setup: func(e *env) string { return "%0" },
			act: func(e *env, pane string, _ RecordingInfo) {
				recordingOf(e, map[string]any{"pane_id": pane, "output_path": filepath.Join(e.t.TempDir(), "next.cast")})
			}, reason: "replaced by a new recording (rec-"},
		{name: "tmux-mcp closes", setup: func(e *env) string { return "%0" },
			act: func(e *env, pane string, _ RecordingInfo) {
				if err := e.srv.Close(context.Background()); err != nil {
					e.t.Fatal(err)
				}
			}, reason: "tmux-mcp exited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			pane := tc.setup(e)
			file := filepath.Join(t.TempDir(), "stop.cast")
			ri := recordingOf(e, map[string]any{"pane_id": pane, "output_path": file})
			tc.act(e, pane, ri)
			var got RecordingInfo
			if tc.name == "tmux-mcp closes" {
				got = ri // the server is closed: the file is what tells
			} else {
				got = waitStopped(t, e, ri.RecordingID)
				if got.StopReason == nil || !strings.HasPrefix(*got.StopReason, tc.reason) {
					t.Errorf("stop_reason %v, want %q", got.StopReason, tc.reason)
				}
			}
			_, evs := readCast(t, file)
			last := evs[len(evs)-1]
			if last.Kind != "m" || !strings.HasPrefix(last.Data, "recording stopped: "+tc.reason) {
				t.Errorf("last event %+v, want the marker of %q", last, tc.reason)
			}
			if tc.check != nil {
				tc.check(t, evs, file)
			}
		})
	}
}

// TestRecordGapMarker: when tmux pauses the pane's output stream to this
// server (pause-after: its control client fell behind), the recording
// says so with a marker where it happened, and goes on with the output
// after it. The pause is tmux's own %pause, brought on by asking tmux for
// it (refresh-client -A %N:pause), which it sends exactly as when a
// client falls behind. A real lag is out of a test's reach: tmux writes a
// control client's output itself, to the pipe this process reads, and
// with only control clients attached it stops reading a pane rather than
// pause it.
func TestRecordGapMarker(t *testing.T) {
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "bash --norc --noprofile")
	waitShell(t, e.tmux, "%0")
	file := filepath.Join(t.TempDir(), "gap.cast")
	recordingOf(e, map[string]any{"pane_id": "%0", "output_path": file})
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo before-$((1+1))"}, nil)
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		raw, _ := os.ReadFile(file)
		return bytes.Contains(raw, []byte("before-2"))
	})
	// Our watcher's client, paused from another client: tmux then sends
	// the %pause as a notification, as pause-after does (asked on the
	// watcher's own connection, it would come inside the command's reply).
	c := e.srv.newCall()
	if err := c.bindHost(e.host); err != nil {
		t.Fatal(err)
	}
	ours := c.watch.PIDs()
	var name string
	for _, l := range strings.Split(e.tmux.MustRun("list-clients", "-F", "#{client_pid} #{client_name}"), "\n") {
		pid, n, _ := strings.Cut(l, " ")
		if p, _ := strconv.Atoi(pid); ours[p] {
			name = n
		}
	}
	if name == "" {
		t.Fatalf("no client of our watchers (%v) among %s", ours, e.tmux.MustRun("list-clients", "-F", "#{client_pid} #{client_name}"))
	}
	e.tmux.MustRun("refresh-client", "-t", name, "-A", "%0:pause")
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		raw, _ := os.ReadFile(file)
		return bytes.Contains(raw, []byte(markPaused))
	})
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo after-$((6*7))"}, nil)
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		raw, _ := os.ReadFile(file)
		return bytes.Contains(raw, []byte(`after-42\r\n`))
	})
	recordingOf(e, map[string]any{"pane_id": "%0", "output_path": nil})
	_, evs := readCast(t, file)
	before := firstEvent(evs, 0, "o", "before-2")
	gap := firstEvent(evs, before, "m", markPaused)
	if before < 0 || gap < 0 || firstEvent(evs, gap, "o", "after-42") < 0 {
		t.Errorf("want output, the gap marker, output: before %d, gap %d", before, gap)
	}
}

// clientAs connects an MCP client to srv through a server whose requests
// carry the authenticated client name (as the HTTP daemon's identify
// middleware makes them).
func clientAs(t *testing.T, srv *Server, name string) *mcp.ClientSession {
	t.Helper()
	ms := srv.MCP()
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(WithClient(ctx, Client{Name: name}), method, req)
		}
	})
	_, css := sessionsOf(t, ms, 1)
	return css[0]
}

// TestRecordingBelongsToItsMaker: a recording is listed, read as a
// resource and stopped only by the client identity that started it;
// another sees none of it (the resource does not exist for it) and can
// record the same pane itself; the maker reads it from a new session too.
func TestRecordingBelongsToItsMaker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := clientAs(t, e.srv, "alice"), clientAs(t, e.srv, "bob")
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		if e.host != "" {
			args = e.onHost(name, args).(map[string]any)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	decode := func(res *mcp.CallToolResult, out any) {
		t.Helper()
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
	listOf := func(cs *mcp.ClientSession) []RecordingInfo {
		var w struct{ Result []RecordingInfo }
		decode(call(cs, "list_recordings", map[string]any{}), &w)
		return w.Result
	}
	var mine RecordingInfo
	decode(call(alice, "record_pane", map[string]any{"pane_id": "%0", "output_path": filepath.Join(t.TempDir(), "alice.cast")}), &mine)

	if got := listOf(bob); len(got) != 0 {
		t.Errorf("bob lists %+v", got)
	}
	if _, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: mine.URI}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("bob reads alice's recording: %v", err)
	}
	if res := call(bob, "record_pane", map[string]any{"pane_id": "%0", "output_path": nil}); !res.IsError || !strings.Contains(text(res), "no recording of yours") {
		t.Errorf("bob stops alice's recording: %s", text(res))
	}
	var his RecordingInfo
	decode(call(bob, "record_pane", map[string]any{"pane_id": "%0", "output_path": filepath.Join(t.TempDir(), "bob.cast")}), &his)
	if got := listOf(alice); len(got) != 1 || got[0].RecordingID != mine.RecordingID || !got[0].Recording {
		t.Errorf("alice lists %+v after bob's start", got)
	}
	if got := listOf(bob); len(got) != 1 || got[0].RecordingID != his.RecordingID {
		t.Errorf("bob lists %+v", got)
	}
	if got := e.ok("list_recordings", map[string]any{}, nil); text(got) != "[]" {
		t.Errorf("the local client lists %s", text(got))
	}
	call(alice, "send_keys", map[string]any{"pane_id": "%0", "keys": "echo both-see-$((3*3))"})
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		a, _ := os.ReadFile(mine.OutputPath)
		b, _ := os.ReadFile(his.OutputPath)
		return bytes.Contains(a, []byte("both-see-9")) && bytes.Contains(b, []byte("both-see-9"))
	})

	// A new session of alice's reads it.
	again := clientAs(t, e.srv, "alice")
	res, err := again.ReadResource(ctx, &mcp.ReadResourceParams{URI: mine.URI})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contents[0]
	if c.MIMEType != "application/x-asciicast" || !strings.HasPrefix(c.Text, `{"version":2,`) || !strings.Contains(c.Text, "both-see-9") || !strings.HasSuffix(c.Text, "\n") {
		t.Errorf("the resource: %s %.300q", c.MIMEType, c.Text)
	}
	decode(call(alice, "record_pane", map[string]any{"pane_id": "%0", "output_path": nil}), &mine)
	if mine.Recording || listOf(bob)[0].Recording != true {
		t.Errorf("alice's stop: %+v; bob's recording must go on", mine)
	}
}

// TestRecordHostPane: a pane on a remote host (over ssh) is recorded into
// a file on this machine: a relative output_path is this machine's (a
// remote path must be absolute elsewhere), the events come over the
// host's connection, and the recording names its host.
func TestRecordHostPane(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	waitShell(t, he.box, "%0")
	dir := t.TempDir()
	t.Chdir(dir)
	ri := recordingOf(e, on(map[string]any{"pane_id": "%0", "output_path": "box.cast"}))
	if ri.Host == nil || *ri.Host != "box" || ri.OutputPath != filepath.Join(dir, "box.cast") {
		t.Fatalf("record_pane on box: %+v", ri)
	}
	e.ok("send_keys", on(map[string]any{"pane_id": "%0", "keys": "echo from-box-$((5*5))"}), nil)
	tmuxtest.WaitFor(t, 15*time.Second, func() bool {
		raw, _ := os.ReadFile(ri.OutputPath)
		return bytes.Contains(raw, []byte("from-box-25\\r\\n"))
	})
	// The local %0 is another pane: stopping it finds no recording.
	if msg, _ := e.fail("record_pane", map[string]any{"pane_id": "%0", "output_path": nil}); !strings.Contains(msg, "no recording of yours") {
		t.Errorf("stopping the local %%0: %s", msg)
	}
	var list []RecordingInfo
	e.list("list_recordings", on(map[string]any{}), &list)
	if len(list) != 1 || list[0].Host == nil || *list[0].Host != "box" || !list[0].Recording {
		t.Errorf("list_recordings on box: %+v", list)
	}
	e.list("list_recordings", map[string]any{"host": nil, "socket_name": e.tmux.Socket.Name}, &list)
	if len(list) != 0 {
		t.Errorf("list_recordings of the local socket lists %+v", list)
	}
	recordingOf(e, on(map[string]any{"pane_id": "%0", "output_path": nil}))
	h, evs := readCast(t, ri.OutputPath)
	if h.Width != 80 || h.Height != 24 {
		t.Errorf("header %+v", h)
	}
	if firstEvent(evs, firstEvent(evs, 0, "i", "echo from-box"), "o", "from-box-25") < 0 {
		t.Errorf("events %+v", evs)
	}
	raw, _ := os.ReadFile(ri.OutputPath)
	if !bytes.Contains(raw, []byte(`(%0) on box"`)) {
		t.Errorf("the title does not name the host: %.200s", raw)
	}
}

// TestRecordPaneRefusals: what record_pane refuses, each with a reason,
// and nothing left behind.
func TestRecordPaneRefusals(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.cast")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "sleep 60")
	e.tmux.MustRun("set-option", "-p", "-t", dead, "remain-on-exit", "on")
	e.tmux.MustRun("respawn-pane", "-k", "-t", dead, "true")
	tmuxWait(t, func() bool {
		out, _ := e.tmux.Run("display-message", "-p", "-t", dead, "#{pane_dead}")
		return out == "1"
	})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"blank path", map[string]any{"pane_id": "%0", "output_path": "  "}, "must not be blank"},
		{"NUL in path", map[string]any{"pane_id": "%0", "output_path": "a\x00b"}, "NUL"},
		{"existing file", map[string]any{"pane_id": "%0", "output_path": existing}, "exists"},
		{"no such directory", map[string]any{"pane_id": "%0", "output_path": filepath.Join(dir, "nope", "x.cast")}, "no such file or directory"},
		{"a directory", map[string]any{"pane_id": "%0", "output_path": dir, "overwrite": true}, "is a directory"},
		{"no such pane", map[string]any{"pane_id": "%99", "output_path": filepath.Join(dir, "x.cast")}, "not found"},
		{"dead pane", map[string]any{"pane_id": dead, "output_path": filepath.Join(dir, "y.cast")}, "is dead"},
		{"nothing to stop", map[string]any{"pane_id": "%0", "output_path": nil}, "no recording of yours"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := e.with(t).fail("record_pane", tc.args)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s", msg)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file changed: %q", b)
	}
	for _, f := range []string{"x.cast", "y.cast"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was left behind", f)
		}
	}
	var list []RecordingInfo
	e.list("list_recordings", map[string]any{}, &list)
	if len(list) != 0 {
		t.Errorf("refused recordings are listed: %+v", list)
	}
	// overwrite replaces the file.
	recordingOf(e, map[string]any{"pane_id": "%0", "output_path": existing, "overwrite": true})
	recordingOf(e, map[string]any{"pane_id": "%0", "output_path": nil})
	readCast(t, existing)

	// The file of a running recording: another pane's recording may not
	// take it, even with overwrite; a new one of the same pane replaces
	// the old first, so the file holds one recording.
	other := e.tmux.MustRun("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sh")
	busy := filepath.Join(dir, "busy.cast")
	first := recordingOf(e, map[string]any{"pane_id": "%0", "output_path": busy})
	if msg, _ := e.fail("record_pane", map[string]any{"pane_id": other, "output_path": busy, "overwrite": true}); !strings.Contains(msg, "another running recording") {
		t.Errorf("another pane into a busy file: %s", msg)
	}
	second := recordingOf(e, map[string]any{"pane_id": "%0", "output_path": busy, "overwrite": true})
	e.list("list_recordings", map[string]any{}, &list)
	for _, r := range list {
		if r.RecordingID == first.RecordingID && (r.Recording || r.StopReason == nil || *r.StopReason != "replaced by a new recording in the same file") {
			t.Errorf("the replaced recording: %+v", r)
		}
	}
	recordingOf(e, map[string]any{"pane_id": "%0", "output_path": nil})
	raw, _ := os.ReadFile(busy)
	if n := bytes.Count(raw, []byte(`{"version":2`)); n != 1 {
		t.Errorf("%s holds %d headers", busy, n)
	}
	readCast(t, second.OutputPath)
}
