package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// memFile is an io.WriteCloser in memory that can be made to fail.
type memFile struct {
	bytes.Buffer
	closed bool
	fail   error
	writes int
}

func (m *memFile) Write(p []byte) (int, error) {
	if m.fail != nil {
		n, _ := m.Buffer.Write(p[:len(p)/2]) // in part, as a full disk does
		return n, m.fail
	}
	m.writes++
	return m.Buffer.Write(p)
}

func (m *memFile) Close() error { m.closed = true; return nil }

func (m *memFile) Truncate(n int64) error { m.Buffer.Truncate(int(n)); return nil }

type line struct {
	T    float64
	Kind string
	Data string
}

// parse reads a recording strictly: a v2 header, then whole lines of
// [number, kind, string] whose times never go back.
func parse(t *testing.T, b []byte) (map[string]any, []line) {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("not whole lines: %q", b)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	var h map[string]any
	var out []line
	for n := 0; sc.Scan(); n++ {
		if !utf8.Valid(sc.Bytes()) {
			t.Fatalf("line %d is not UTF-8: %q", n+1, sc.Bytes())
		}
		if n == 0 {
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h["version"] != 2.0 {
				t.Fatalf("header %q: %v", sc.Bytes(), err)
			}
			continue
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &parts); err != nil || len(parts) != 3 {
			t.Fatalf("line %d %q: %v", n+1, sc.Bytes(), err)
		}
		var l line
		if json.Unmarshal(parts[0], &l.T) != nil || json.Unmarshal(parts[1], &l.Kind) != nil || json.Unmarshal(parts[2], &l.Data) != nil {
			t.Fatalf("line %d %q", n+1, sc.Bytes())
		}
		if len(out) > 0 && l.T < out[len(out)-1].T {
			t.Fatalf("line %d goes back in time: %v after %v", n+1, l.T, out[len(out)-1].T)
		}
		out = append(out, l)
	}
	return h, out
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\r\n\t", `"\r\n\t"`},
		{"\x1b[31m\x00\x7f", `"\u001b[31m\u0000` + "\x7f" + `"`},
		{"<&>", `"<&>"`},
		{"café 中文 \U0001F600", `"café 中文 ` + "\U0001F600" + `"`},
		{"bad \xff byte", `"bad ` + "\ufffd" + ` byte"`},
		{"cut \xe4\xb8", `"cut ` + "\ufffd\ufffd" + `"`},
	}
	for _, tc := range tests {
		if got := string(appendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzAppendJSONString: whatever the bytes, the string is valid JSON that
// decodes to what encoding/json makes of them (invalid UTF-8 replaced).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"\\", "\x1b[0m\r\n", "\xff\xfe", "中\xe4", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		_ = json.Unmarshal(ref, &want)
		if got != want {
			t.Fatalf("%q decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}

func TestSplitUTF8(t *testing.T) {
	tests := []struct{ in, whole, rest string }{
		{"", "", ""},
		{"abc", "abc", ""},
		{"ab\xe4", "ab", "\xe4"},
		{"ab\xe4\xb8", "ab", "\xe4\xb8"},
		{"ab\xe4\xb8\xad", "ab\xe4\xb8\xad", ""},
		{"\xf0\x9f\x98", "", "\xf0\x9f\x98"},
		{"x\xff", "x\xff", ""},                       // invalid, not incomplete: written (as U+FFFD)
		{"\xb8\xb8\xb8\xb8", "\xb8\xb8\xb8\xb8", ""}, // continuation bytes alone
	}
	for _, tc := range tests {
		w, r := splitUTF8([]byte(tc.in))
		if string(w) != tc.whole || string(r) != tc.rest {
			t.Errorf("%q: %q + %q, want %q + %q", tc.in, w, r, tc.whole, tc.rest)
		}
	}
}

// A recording's events are timed from its start, never go back in time,
// carry a character split between two outputs whole, and end with a
// marker giving the reason; nothing is written after.
func TestRecorderEvents(t *testing.T) {
	start := time.Now()
	var f memFile
	r, err := New(&f, Header{Width: 80, Height: 24, Timestamp: start, Title: "t", Env: map[string]string{"TERM": "screen"}}, []byte("\x1b[Hscreen"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	steps := []func() error{
		func() error { return r.Input(at(100), []byte("ls\r")) },
		func() error { return r.Output(at(150), []byte("file \xe4\xb8")) },
		func() error { return r.Output(at(400), []byte("\xad\r\n")) },
		func() error { return r.Output(at(300), []byte("late")) }, // arrived out of order: kept at 0.4
		func() error { return r.Resize(at(1000), 100, 30) },
		func() error { return r.Marker(at(1500), "gap") },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := r.Stop(at(2000), "done"); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(at(3000), "again"); err != nil {
		t.Fatal(err)
	}
	if err := r.Output(at(2500), []byte("after")); !errors.Is(err, ErrStopped) {
		t.Errorf("output after the stop: %v", err)
	}
	select {
	case <-r.Done():
	default:
		t.Error("Done is not closed")
	}
	h, lines := parse(t, f.Bytes())
	if h["width"] != 80.0 || h["height"] != 24.0 || h["title"] != "t" || h["timestamp"] != float64(start.Unix()) {
		t.Errorf("header %v", h)
	}
	want := []line{
		{0, "o", "\x1b[Hscreen"},
		{0.1, "i", "ls\r"},
		{0.15, "o", "file "},
		{0.4, "o", "中\r\n"},
		{0.4, "o", "late"},
		{1, "r", "100x30"},
		{1.5, "m", "gap"},
		{2, "m", "recording stopped: done"},
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %+v", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, lines[i], want[i])
		}
	}
	st := r.Stats()
	if !st.Stopped || st.Reason != "done" || st.Events != len(want) || st.Bytes != int64(f.Len()) || st.Duration != 2*time.Second {
		t.Errorf("stats %+v (file %d bytes)", st, f.Len())
	}
	if !f.closed {
		t.Error("the file was not closed")
	}
}

// The size limit is never passed: the event that would pass it is left
// out and the recording ends with a marker naming the limit, within it.
func TestRecorderSizeLimit(t *testing.T) {
	start := time.Now()
	var f memFile
	const limit = 2000
	r, err := New(&f, Header{Width: 80, Height: 24, Timestamp: start}, []byte("screen"), Limits{MaxBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	var stopErr error
	for i := 0; i < 1000 && stopErr == nil; i++ {
		stopErr = r.Output(start.Add(time.Duration(i)*time.Millisecond), []byte(strings.Repeat("x", 50)))
	}
	if !errors.Is(stopErr, ErrStopped) {
		t.Fatalf("no stop at the size limit: %v", stopErr)
	}
	if f.Len() > limit {
		t.Errorf("file %d bytes, limit %d", f.Len(), limit)
	}
	_, lines := parse(t, f.Bytes())
	last := lines[len(lines)-1]
	if last.Kind != "m" || last.Data != "recording stopped: size limit reached (2000 bytes)" {
		t.Errorf("last line %+v", last)
	}
	if st := r.Stats(); st.Reason != ReasonSizeLimit+" (2000 bytes)" {
		t.Errorf("reason %q", st.Reason)
	}
	// A limit below the start itself refuses to start.
	if _, err := New(&memFile{}, Header{Width: 80, Height: 24}, []byte(strings.Repeat("y", 500)), Limits{MaxBytes: 300}); err == nil {
		t.Error("a start over the size limit was accepted")
	}
}

// The duration limit ends the recording on its own (nothing needs to
// happen in the terminal) with its marker at the limit's time; an event
// later than the limit also ends it.
func TestRecorderDurationLimit(t *testing.T) {
	var f memFile
	start := time.Now()
	r, err := New(&f, Header{Width: 10, Height: 5, Timestamp: start}, nil, Limits{MaxDuration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the duration limit did not stop the recording")
	}
	_, lines := parse(t, f.Bytes())
	if len(lines) != 1 || lines[0] != (line{0.2, "m", "recording stopped: duration limit reached"}) {
		t.Errorf("lines %+v", lines)
	}

	var g memFile
	r, err = New(&g, Header{Width: 10, Height: 5, Timestamp: start}, nil, Limits{MaxDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Output(start.Add(2*time.Hour), []byte("too late")); !errors.Is(err, ErrStopped) {
		t.Errorf("an event past the limit: %v", err)
	}
	_, lines = parse(t, g.Bytes())
	if len(lines) != 1 || lines[0] != (line{3600, "m", "recording stopped: duration limit reached"}) {
		t.Errorf("lines %+v", lines)
	}
}

// A failed write ends the recording and says why; the line written in
// part is taken back (the file stays whole lines) and nothing more is
// written.
func TestRecorderWriteFailure(t *testing.T) {
	var f memFile
	r, err := New(&f, Header{Width: 10, Height: 5}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Output(time.Now(), []byte("kept")); err != nil {
		t.Fatal(err)
	}
	before := f.String()
	f.fail = errors.New("disk full")
	if err := r.Output(time.Now(), []byte("x")); !errors.Is(err, ErrStopped) {
		t.Fatalf("output on a failing file: %v", err)
	}
	st := r.Stats()
	if !st.Stopped || st.Reason != ReasonWriteFailed || st.Err == nil || !f.closed {
		t.Errorf("stats %+v closed %v", st, f.closed)
	}
	if f.String() != before {
		t.Errorf("after the failed write the file is %q, was %q", f.String(), before)
	}
}

// Create refuses an existing file unless asked to replace it, and makes
// the file readable by its owner only.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.cast")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(p, false, Header{Width: 10, Height: 5}, nil, Limits{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("existing file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "keep" {
		t.Fatalf("the existing file changed: %q", b)
	}
	r, err := Create(p, true, Header{Width: 10, Height: 5}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Stop(time.Now(), "x")
	b, _ := os.ReadFile(p)
	parse(t, b)
	q := filepath.Join(dir, "new.cast")
	r, err = Create(q, false, Header{Width: 10, Height: 5}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Stop(time.Now(), "x")
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		keys    string
		literal bool
		want    string
	}{
		{"echo hi", false, "echo hi"},
		{"Enter", false, "\r"},
		{"enter", false, "\r"},
		{"Enter", true, "Enter"},
		{"C-c", false, "\x03"},
		{"c-C", false, "\x03"},
		{"^D", false, "\x04"},
		{"C-Space", false, "\x00"},
		{"Space", false, " "},
		{"C-@", false, "\x00"},
		{"C-[", false, "\x1b"},
		{"M-x", false, "\x1bx"},
		{"M-C-a", false, "\x1b\x01"},
		{"S-a", false, "A"},
		{"Escape", false, "\x1b"},
		{"BSpace", false, "\x7f"},
		{"Tab", false, "\t"},
		{"BTab", false, "\x1b[Z"},
		{"Up", false, "\x1b[A"},
		{"C-Up", false, "\x1b[1;5A"},
		{"S-Left", false, "\x1b[1;2D"},
		{"PageDown", false, "\x1b[6~"},
		{"NPage", false, "\x1b[6~"},
		{"M-PPage", false, "\x1b[5;3~"},
		{"F1", false, "\x1bOP"},
		{"C-F1", false, "\x1b[1;5P"},
		{"F12", false, "\x1b[24~"},
		{"Home", false, "\x1b[1~"},
		{"DC", false, "\x1b[3~"},
		{"q", false, "q"},
		{"中", false, "中"},
		{"X-y", false, "X-y"}, // not a modifier: typed as text
		{"C-NoSuch", false, "C-NoSuch"},
		{"", false, ""},
	}
	for _, tc := range tests {
		if got := string(Keys(tc.keys, tc.literal)); got != tc.want {
			t.Errorf("Keys(%q, %v) = %q, want %q", tc.keys, tc.literal, got, tc.want)
		}
	}
}
