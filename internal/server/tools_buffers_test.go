package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func bufferNames(e *env) []string {
	out := e.tmux.MustRun("list-buffers", "-F", "#{buffer_name}")
	if out == "" {
		return nil
	}
	names := strings.Split(out, "\n")
	sort.Strings(names)
	return names
}

func loadBuf(e *env, content string, logical any) BufferRef {
	e.t.Helper()
	var ref BufferRef
	e.ok("load_buffer", map[string]any{"content": content, "logical_name": logical}, &ref)
	return ref
}

func TestBufferRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := strings.Repeat("0123456789abcdef", 1<<14) + "\nend\n" // 256 KiB: the temp-file path
	cases := []struct{ name, content string }{
		{"plain", "hello"},
		{"quotes", `it's "quoted" 'twice'`},
		{"semicolon alone", ";"},
		{"trailing semicolon", "echo a;"},
		{"trailing escaped semicolon", `echo a\;`},
		{"double backslash semicolon", `x\\;`},
		{"format", "#{session_name} #(id) ##"},
		{"newlines with trailing newline", "line1\nline2\n"},
		{"only newline", "\n"},
		{"leading dash", "-b other -- x"},
		{"control characters", "\x1b[31mred\t\r\x01"},
		{"unicode", "héllo ☃ 日本"},
		{"NUL byte (temp-file path; over ssh, streamed)", "a\x00b"},
		{"just over the argument limit", strings.Repeat("x", maxArgContent+1)},
		{"256 KiB", big},
	}
	nameRE := regexp.MustCompile(`^tmux_mcp_[0-9a-f]+_[0-9a-f]+_[0-9a-f]{8}_[0-9a-f]{16}_rt$`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := loadBuf(e, c.content, "rt")
			if !nameRE.MatchString(ref.BufferName) || ref.LogicalName == nil || *ref.LogicalName != "rt" {
				t.Fatalf("ref %+v", ref)
			}
			var got BufferContent
			e.ok("show_buffer", map[string]any{"buffer_name": ref.BufferName, "max_lines": nil}, &got)
			if got.Content != c.content || got.ContentTruncated || got.ContentTruncatedLines != 0 || got.BufferName != ref.BufferName {
				t.Errorf("round trip differs: %d bytes back, want %d (truncated=%v)", len(got.Content), len(c.content), got.ContentTruncated)
			}
		})
	}
	entries, _ := os.ReadDir(os.TempDir())
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), bufferTempPrefix) {
			// Other tests in this process may be mid-load; only report files
			// whose directory outlived its call noticeably.
			if info, err := en.Info(); err == nil && time.Since(info.ModTime()) > 5*time.Second {
				t.Errorf("temporary directory %s left behind", en.Name())
			}
		}
	}
}

func TestShowBufferTruncation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ref := loadBuf(e, "a\nb\nc\nd\n", nil)
	if !strings.HasSuffix(ref.BufferName, "_buf") || ref.LogicalName != nil {
		t.Errorf("default logical name: %+v", ref)
	}
	for _, c := range []struct {
		maxLines any
		want     string
		trunc    int
	}{
		{2, "c\nd", 2},
		{1, "d", 3},
		{4, "a\nb\nc\nd\n", 0},
		{500, "a\nb\nc\nd\n", 0},
		{nil, "a\nb\nc\nd\n", 0},
	} {
		var got BufferContent
		e.ok("show_buffer", map[string]any{"buffer_name": ref.BufferName, "max_lines": c.maxLines}, &got)
		if got.Content != c.want || got.ContentTruncatedLines != c.trunc || got.ContentTruncated != (c.trunc > 0) {
			t.Errorf("max_lines=%v: %+v", c.maxLines, got)
		}
	}
	var def BufferContent
	e.ok("show_buffer", map[string]any{"buffer_name": ref.BufferName}, &def)
	if def.Content != "a\nb\nc\nd\n" {
		t.Errorf("default max_lines: %+v", def)
	}
	for _, n := range []int{0, -1} {
		msg, _ := e.fail("show_buffer", map[string]any{"buffer_name": ref.BufferName, "max_lines": n})
		if !strings.Contains(msg, "max_lines must be a positive integer") {
			t.Errorf("max_lines=%d: %q", n, msg)
		}
	}
}

func TestBufferRefusesForeignNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("set-buffer", "-b", "secret", "x")
	ours := loadBuf(e, "mine", "lbl")
	// Well-formed names that are not this instance's: another live
	// process, another instance of this process, and the reference's.
	otherInstance := fmt.Sprintf("tmux_mcp_%x_%s_00000000_0123456789abcdef_lbl", os.Getpid(), procStart(os.Getpid()))
	foreign := []string{
		"secret",
		"",
		"tmux_mcp_1_1_00000000_0123456789abcdef_buf",
		otherInstance,
		"libtmux_mcp_00112233445566778899aabbccddeeff_buf",
		ours.BufferName + "/../secret",
		ours.BufferName + "\n",
	}
	_, _, pid := ids(e)
	for _, name := range foreign {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"show_buffer", map[string]any{"buffer_name": name}},
			{"paste_buffer", map[string]any{"buffer_name": name, "pane_id": pid}},
			{"delete_buffer", map[string]any{"buffer_name": name}},
		} {
			msg, meta := e.fail(c.tool, c.args)
			if !strings.Contains(msg, "Invalid buffer name") || meta["expected"] != true {
				t.Errorf("%s(%q): %q", c.tool, name, msg)
			}
		}
	}
	if got := e.tmux.MustRun("show-buffer", "-b", "secret"); got != "x" {
		t.Errorf("user buffer changed: %q", got)
	}
}

func TestBufferErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ref := loadBuf(e, "gone soon", nil)
	var msg string
	e.ok("delete_buffer", map[string]any{"buffer_name": ref.BufferName}, &msg)
	if msg != fmt.Sprintf("Buffer '%s' deleted", ref.BufferName) {
		t.Errorf("delete text %q", msg)
	}
	live := loadBuf(e, "live", nil)
	for _, c := range []struct {
		tool, want string
		args       map[string]any
	}{
		{"show_buffer", "Buffer not found", map[string]any{"buffer_name": ref.BufferName}},
		{"delete_buffer", "Buffer not found", map[string]any{"buffer_name": ref.BufferName}},
		{"paste_buffer", "Buffer not found", map[string]any{"buffer_name": ref.BufferName}},
		{"paste_buffer", "Pane not found", map[string]any{"buffer_name": live.BufferName, "pane_id": "%999"}},
		{"paste_buffer", "pane id must look like %", map[string]any{"buffer_name": live.BufferName, "pane_id": "1"}},
		{"paste_buffer", "Session not found", map[string]any{"buffer_name": live.BufferName, "session_name": "nosuch"}},
		{"load_buffer", "content is empty", map[string]any{"content": ""}},
		{"load_buffer", "Invalid logical buffer name", map[string]any{"content": "x", "logical_name": "has space"}},
		{"load_buffer", "Invalid logical buffer name", map[string]any{"content": "x", "logical_name": strings.Repeat("a", 65)}},
		{"paste_text", "text is empty", map[string]any{"text": ""}},
		{"paste_text", "Pane not found", map[string]any{"text": "SECRET", "pane_id": "%999"}},
		{"paste_text", "Window not found", map[string]any{"text": "SECRET", "window_id": "@999"}},
	} {
		msg, _ := e.fail(c.tool, c.args)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "SECRET") {
			t.Errorf("%s(%v): %q, want %q", c.tool, c.args, msg, c.want)
		}
	}
	// A failed paste_text leaves no buffer behind.
	for _, n := range bufferNames(e) {
		if n != live.BufferName {
			t.Errorf("leftover buffer %s", n)
		}
	}
	// Content tmux holds that is not UTF-8 is refused, not mangled.
	e.tmux.MustRun("set-buffer", "-b", live.BufferName, "ok\xff\xfe")
	msg, _ = e.fail("show_buffer", map[string]any{"buffer_name": live.BufferName})
	if !strings.Contains(msg, "not valid UTF-8") {
		t.Errorf("invalid UTF-8: %q", msg)
	}
}

func catPane(t *testing.T, e *env) string {
	t.Helper()
	return e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "cat")
}

func waitPane(t *testing.T, e *env, pane, want string) {
	t.Helper()
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", pane)
		return strings.Contains(out, want)
	})
}

func TestPasteText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name    string
		bracket bool
		text    string
		target  func(pane string) map[string]any
	}{
		{"bracketed", true, "echo 'one'; #{x} a;\nsecond line\n", func(p string) map[string]any { return map[string]any{"pane_id": p} }},
		{"plain", false, "plain;", func(p string) map[string]any { return map[string]any{"pane_id": p} }},
		{"large", true, strings.Repeat("y", maxArgContent+100) + "\n", func(p string) map[string]any { return map[string]any{"pane_id": p} }},
		{"window target", true, "via window\n", func(p string) map[string]any {
			return map[string]any{"window_id": e.tmux.MustRun("display-message", "-p", "-t", p, "#{window_id}")}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pane := catPane(t, e)
			args := c.target(pane)
			args["text"], args["bracket"] = c.text, c.bracket
			var msg string
			e.ok("paste_text", args, &msg)
			if msg != "Text pasted to pane "+pane {
				t.Errorf("text %q", msg)
			}
			lines := strings.Split(strings.TrimSuffix(c.text, "\n"), "\n")
			last := lines[len(lines)-1]
			if len(last) > 40 {
				last = last[len(last)-40:]
			}
			waitPane(t, e, pane, last)
			out := e.tmux.MustRun("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
			if strings.Contains(out, "\x1b[200~") || strings.Contains(out, "200~") {
				t.Errorf("bracket markers reached cat: %q", out)
			}
			if c.name == "bracketed" && !strings.Contains(out, "echo 'one'; #{x} a;\nsecond line") {
				t.Errorf("pane shows %q", out)
			}
			for _, n := range bufferNames(e) {
				if strings.HasPrefix(n, "tmux_mcp_") {
					t.Errorf("paste_text left buffer %s", n)
				}
			}
		})
	}
}

func TestPasteBuffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := catPane(t, e)
	ref := loadBuf(e, "pasted twice;\n", "p")
	for i := 0; i < 2; i++ {
		var msg string
		e.ok("paste_buffer", map[string]any{"buffer_name": ref.BufferName, "pane_id": pane, "bracket": i == 0}, &msg)
		if msg != fmt.Sprintf("Buffer '%s' pasted to pane %s", ref.BufferName, pane) {
			t.Errorf("text %q", msg)
		}
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", pane)
		return strings.Count(out, "pasted twice;") >= 4 // typed echo + cat output, twice
	})
	if names := bufferNames(e); len(names) != 1 || names[0] != ref.BufferName {
		t.Errorf("paste_buffer must keep the buffer: %v", names)
	}
	// Without pane_id: the first pane of the session.
	var msg string
	e.ok("paste_buffer", map[string]any{"buffer_name": ref.BufferName, "session_name": "main"}, &msg)
	_, _, first := ids(e)
	if !strings.HasSuffix(msg, "pane "+first) {
		t.Errorf("session fallback pasted to %q, want %s", msg, first)
	}
}

// TestBufferReclaimAndClose: buffers of a dead tmux-mcp process are
// reclaimed the first time a buffer tool reaches the server; Close deletes
// this instance's own leftovers; nothing else is ever touched.
func TestBufferReclaimAndClose(t *testing.T) {
	skipOverSSH(t, "stale-buffer reclaim reads this machine's /proc; remote hosts are not reclaimed")
	t.Parallel()
	e := newEnv(t)
	self := os.Getpid()
	start := procStart(self)
	if start == "0" {
		t.Fatal("no /proc start time for this process")
	}
	deadPid := fmt.Sprintf("tmux_mcp_%x_1_00000000_0123456789abcdef_buf", 0x7ffffff0)
	reusedPid := fmt.Sprintf("tmux_mcp_%x_%s_00000000_0123456789abcdef_x.y", self, "1")
	liveOther := fmt.Sprintf("tmux_mcp_%x_%s_00000000_0123456789abcdef_keep", self, start)
	pid1 := fmt.Sprintf("tmux_mcp_1_%s_00000000_0123456789abcdef_init", procStart(1))
	for _, n := range []string{deadPid, reusedPid, liveOther, pid1, "secret", "tmux_mcp_lookalike"} {
		e.tmux.MustRun("set-buffer", "-b", n, "x")
	}
	a := loadBuf(e, "a", "a")
	b := loadBuf(e, "b", "b")
	want := []string{a.BufferName, b.BufferName, liveOther, pid1, "secret", "tmux_mcp_lookalike"}
	sort.Strings(want)
	if got := bufferNames(e); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after reclaim:\n got %v\nwant %v", got, want)
	}

	// A second server instance on the same tmux server keeps the first
	// one's buffers (same live process) and Close removes only its own.
	e2 := newEnvOn(t, e.tmux)
	c := loadBuf(e2, "c", nil)
	if err := e.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = []string{c.BufferName, liveOther, pid1, "secret", "tmux_mcp_lookalike"}
	sort.Strings(want)
	if got := bufferNames(e); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after Close:\n got %v\nwant %v", got, want)
	}
	if err := e2.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Close on a server that is gone is not an error.
	e3 := newEnv(t)
	loadBuf(e3, "d", nil)
	e3.tmux.Kill()
	if err := e3.srv.Close(context.Background()); err != nil {
		t.Errorf("Close after the tmux server died: %v", err)
	}
}

func TestBufferToolsDeadServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"load_buffer", map[string]any{"content": "x"}},
		{"load_buffer", map[string]any{"content": strings.Repeat("x", maxArgContent+1)}},
		{"paste_text", map[string]any{"text": "x", "pane_id": "%1"}},
	} {
		_, meta := e.fail(c.tool, c.args)
		if meta["error_type"] != "TmuxServerNotRunning" {
			t.Errorf("%s: %v", c.tool, meta)
		}
	}
}

// A buffer larger than the 1 MB result cap loses whole lines from its
// head, counted in content_truncated_lines: nothing is added and no line
// comes back cut. (e.ok validates each result against the output schema.)
func TestShowBufferOverResultCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var many strings.Builder
	for i := 0; i < 40_000; i++ {
		fmt.Fprintf(&many, "line %06d of the buffer\n", i)
	}
	for _, c := range []struct {
		name, content, want string
		dropped             int
	}{
		{"3M characters without a newline", strings.Repeat("x", 3_000_000), "", 1},
		{"a 1 MiB line, then a short one", strings.Repeat("0123456789abcdef", 1<<16) + "\nTHE END\n", "THE END\n", 1},
		{"many lines", many.String(), "", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			ref := loadBuf(e, c.content, "huge")
			loaded := time.Since(start)
			var got BufferContent
			e.ok("show_buffer", map[string]any{"buffer_name": ref.BufferName, "max_lines": nil}, &got)
			if !got.ContentTruncated || !strings.HasSuffix(c.content, got.Content) {
				t.Fatalf("truncated=%v, %d bytes kept, a tail: %v", got.ContentTruncated, len(got.Content), strings.HasSuffix(c.content, got.Content))
			}
			head := c.content[:len(c.content)-len(got.Content)]
			if got.Content != "" && !strings.HasSuffix(head, "\n") {
				t.Fatalf("cut inside a line: %.40q", got.Content)
			}
			n := strings.Count(head, "\n")
			if got.Content == "" && !strings.HasSuffix(head, "\n") {
				n++
			}
			if got.ContentTruncatedLines != n {
				t.Errorf("content_truncated_lines %d, %d lines dropped", got.ContentTruncatedLines, n)
			}
			if c.dropped >= 0 && (got.Content != c.want || n != c.dropped) {
				t.Errorf("kept %.40q (%d bytes), dropped %d lines", got.Content, len(got.Content), n)
			}
			if c.dropped < 0 && len(got.Content) < 400_000 {
				t.Errorf("only %d bytes kept", len(got.Content))
			}
			t.Logf("%d-byte buffer loaded in %v: %d bytes back, content_truncated_lines=%d", len(c.content), loaded.Round(time.Millisecond), len(got.Content), got.ContentTruncatedLines)
		})
	}
}

// load_buffer keeps at most maxLiveBuffers per process and refuses the next
// one, naming the cap and the way out, rather than evicting a buffer a
// client may still mean to paste (issue 9 item 13: 999 after a soak).
func TestLoadBufferCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refs := make([]BufferRef, maxLiveBuffers)
	for i := range refs {
		refs[i] = loadBuf(e, fmt.Sprintf("content %d", i), nil)
	}
	refused := func(when string) {
		t.Helper()
		msg, meta := e.fail("load_buffer", map[string]any{"content": "one too many"})
		if !strings.Contains(msg, "Buffer limit reached") || !strings.Contains(msg, fmt.Sprint(maxLiveBuffers)) ||
			!strings.Contains(msg, "delete_buffer") || meta["expected"] != true {
			t.Errorf("%s: %q %v", when, msg, meta)
		}
	}
	refused("at the cap")
	if n := len(bufferNames(e)); n != maxLiveBuffers {
		t.Fatalf("tmux holds %d buffers, want %d: one was evicted or the refused one made", n, maxLiveBuffers)
	}
	// Every buffer is still there, with its content.
	for i, r := range []int{0, maxLiveBuffers / 2, maxLiveBuffers - 1} {
		var got BufferContent
		e.ok("show_buffer", map[string]any{"buffer_name": refs[r].BufferName}, &got)
		if got.Content != fmt.Sprintf("content %d", r) {
			t.Errorf("buffer %d: %q", i, got.Content)
		}
	}

	// delete_buffer frees a place.
	e.ok("delete_buffer", map[string]any{"buffer_name": refs[0].BufferName}, nil)
	again := loadBuf(e, "after a delete", nil)
	refused("full again")

	// A buffer deleted behind our back frees its place too, once the cap
	// is reached and tmux is asked.
	e.tmux.MustRun("delete-buffer", "-b", refs[1].BufferName)
	loadBuf(e, "after an outside delete", nil)
	refused("full once more")

	// A failed show of a vanished buffer frees its place as well.
	e.tmux.MustRun("delete-buffer", "-b", again.BufferName)
	msg, _ := e.fail("show_buffer", map[string]any{"buffer_name": again.BufferName})
	if !strings.Contains(msg, "Buffer not found") {
		t.Errorf("show of a vanished buffer: %q", msg)
	}
	loadBuf(e, "after a failed show", nil)
	refused("full at the end")

	// paste_text keeps no buffer, so the cap does not stop it.
	pane := catPane(t, e)
	e.ok("paste_text", map[string]any{"text": "still pastes", "pane_id": pane}, nil)
}

// callAs runs a tool as the client o, the way an HTTP transport will.
func callAs(e *env, o Owner, name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	return e.srv.invoke(WithOwner(context.Background(), o), e.srv.tool(name), nil, raw, "")
}

// Buffers belong to the client that loaded them: another client can
// neither read, paste nor delete them, and is told no such buffer exists.
func TestBufferOwners(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pane := catPane(t, e)
	load := func(o Owner, content string) string {
		t.Helper()
		res := callAs(e, o, "load_buffer", map[string]any{"content": content})
		if res.IsError {
			t.Fatalf("load as %s: %s", o, text(res))
		}
		var ref BufferRef
		decodeStructured(t, res, &ref)
		return ref.BufferName
	}
	alice := load("alice", "alice's secret")
	alice2 := load("alice", "alice's other")
	bob := load("bob", "bob's")
	local := loadBuf(e, "over stdio", nil).BufferName // LocalOwner

	for _, c := range []struct {
		who  Owner
		name string
	}{{"bob", alice}, {LocalOwner, alice}, {"alice", bob}, {"alice", local}, {"carol", local}} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"show_buffer", map[string]any{"buffer_name": c.name}},
			{"paste_buffer", map[string]any{"buffer_name": c.name, "pane_id": pane}},
			{"delete_buffer", map[string]any{"buffer_name": c.name}},
		} {
			res := callAs(e, c.who, call.tool, call.args)
			msg := text(res)
			if !res.IsError || !strings.Contains(msg, "Buffer not found: "+c.name) || strings.Contains(msg, "secret") {
				t.Errorf("%s %s(%s): %q", c.who, call.tool, c.name, msg)
			}
		}
	}
	if names := strings.Join(bufferNames(e), ","); !strings.Contains(names, alice) || !strings.Contains(names, bob) || !strings.Contains(names, local) {
		t.Fatalf("another client's call removed a buffer: %s", names)
	}
	// The owner still can.
	res := callAs(e, "alice", "show_buffer", map[string]any{"buffer_name": alice})
	var got BufferContent
	decodeStructured(t, res, &got)
	if res.IsError || got.Content != "alice's secret" {
		t.Errorf("alice's own show: %s", text(res))
	}
	if res := callAs(e, "bob", "delete_buffer", map[string]any{"buffer_name": bob}); res.IsError {
		t.Errorf("bob's own delete: %s", text(res))
	}

	// Releasing a client deletes its buffers only.
	if err := e.srv.ReleaseBuffers(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	want := []string{local}
	if got := bufferNames(e); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after releasing alice: %v, want %v", got, want)
	}
	if res := callAs(e, "alice", "show_buffer", map[string]any{"buffer_name": alice2}); !strings.Contains(text(res), "Buffer not found") {
		t.Errorf("alice's released buffer: %s", text(res))
	}
	var s BufferContent
	e.ok("show_buffer", map[string]any{"buffer_name": local}, &s)
	if s.Content != "over stdio" {
		t.Errorf("local buffer after releasing alice: %q", s.Content)
	}
}

// The cap is per client: over HTTP one process serves many clients, and
// one that filled its places must not stop the others from loading; its
// refusal names its own count.
func TestLoadBufferCapPerClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < maxLiveBuffers; i++ {
		if res := callAs(e, "alice", "load_buffer", map[string]any{"content": fmt.Sprint(i)}); res.IsError {
			t.Fatalf("alice's load %d: %s", i, text(res))
		}
	}
	res := callAs(e, "alice", "load_buffer", map[string]any{"content": "one too many"})
	if msg := text(res); !res.IsError || !strings.Contains(msg, "you already hold 100 buffers") {
		t.Errorf("alice past her cap: %q", msg)
	}
	for _, o := range []Owner{"bob", LocalOwner} {
		if res := callAs(e, o, "load_buffer", map[string]any{"content": "mine"}); res.IsError {
			t.Errorf("%s could not load while alice is at her cap: %s", o, text(res))
		}
	}
	if got := len(bufferNames(e)); got != maxLiveBuffers+2 {
		t.Errorf("tmux holds %d buffers, want %d", got, maxLiveBuffers+2)
	}
}

// The process-wide ceiling holds over all clients together, each below its
// own cap.
func TestBufferCeilingOverClients(t *testing.T) {
	st := &bufferState{live: map[Owner]map[string]*liveBuffer{}}
	n := 0
	for c := 0; n < maxBuffersTotal; c++ {
		for i := 0; i < maxLiveBuffers-1 && n < maxBuffersTotal; i++ {
			if !st.add(Owner(fmt.Sprintf("client-%d", c)), fmt.Sprint(i), hostKey{}) {
				t.Fatalf("refused place %d (client %d, its %d-th) below the ceiling", n, c, i)
			}
			n++
		}
	}
	if st.add("newcomer", "x", hostKey{}) {
		t.Errorf("a client with no buffer got a place past the ceiling of %d", maxBuffersTotal)
	}
	st.forget("client-0", "0")
	if !st.add("newcomer", "x", hostKey{}) {
		t.Error("a freed place was not given to the next client")
	}
}

// Concurrent loads cannot overshoot the cap: each takes its place before
// tmux is asked.
func TestLoadBufferCapConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = maxLiveBuffers + 30
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_buffer", Arguments: map[string]any{"content": fmt.Sprint(i)}})
			switch {
			case err != nil:
				t.Errorf("protocol error: %v", err)
			case !res.IsError:
				ok.Add(1)
			case strings.Contains(text(res), "Buffer limit reached"):
				refused.Add(1)
			default:
				t.Errorf("load %d: %s", i, text(res))
			}
		}()
	}
	wg.Wait()
	if ok.Load() != maxLiveBuffers || refused.Load() != n-maxLiveBuffers {
		t.Errorf("%d loaded, %d refused", ok.Load(), refused.Load())
	}
	if got := len(bufferNames(e)); got != maxLiveBuffers {
		t.Errorf("tmux holds %d buffers", got)
	}
}
