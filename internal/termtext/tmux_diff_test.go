package termtext_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/termtext"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// diffAlphabet is what the differential tests print: every byte that opens,
// feeds, ends or aborts a sequence (ESC, CAN, SUB, BEL, ST), the bytes that
// pick the sequence kind after ESC ([ ] P _ ^ X k), parameters, and
// letters. The letters are those whose meaning in every position is either
// nothing or what the decoder models: as CSI finals m (colours), K (erase
// in line), G (column), C (forward), P (delete), X (erase characters); as
// ESC finals all are no-ops except the sequence openers. Letters that move
// the cursor between rows (ESC D, ESC M, CSI A ...) or clear the screen are
// left out: the decoder models lines, not a screen. Digits 7 and 8 are out
// for the same reason (ESC 7 / ESC 8 save and restore the cursor).
var diffAlphabet = []string{
	"\x1b", "\x1b", "\x1b", "[", "[", "]", "P", "_", "^", "X", "k", ";", ";",
	"0", "1", "2", "3", "5", "9", "a", "m", "K", "G", "C", "x", "y", "z",
	"\x07", "\x18", "\x1a", "\x1b\\", "\r\n",
}

// dcsPassthrough matches a DCS that reaches its data part: there tmux keeps
// the sequence open across an ESC that does not start ST (for its
// passthrough feature), where the decoder, like ECMA-48 terminals, aborts
// it. That is the one known difference, so such inputs are not compared.
// (C0 controls between ESC and P, or among the parameters, run or are
// ignored without ending the sequence.)
var dcsPassthrough = regexp.MustCompile("\x1b[\x00-\x17\x19\x1c-\x1f]*P[\x00-\x17\x19\x1c-\x3f]*[\x40-\x7e]")

// diffEnd follows every sample: CAN returns any parser to ground, then a
// line that tells the test the pane has printed everything.
const diffEnd = "\x18\r\n@@END@@"

// tmuxScreens prints each sample in its own window of a tmux 3.3a server
// (with the tty in raw mode, so tmux gets the bytes exactly as the decoder
// does) and returns what capture-pane shows before the end line.
func tmuxScreens(t testing.TB, ts *tmuxtest.Server, dir string, samples []string) [][]string {
	t.Helper()
	run(t, ts, "kill-window", "-a", "-t", "base:0")
	var args []string
	for i, s := range samples {
		f := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.WriteFile(f, []byte(s+diffEnd), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "new-window", "-d", "-t", fmt.Sprintf("base:%d", i+1),
			"sh", "-c", `stty raw -echo; cat "$0"; exec sleep 600`, f, ";")
	}
	run(t, ts, args...)
	out := make([][]string, len(samples))
	deadline := time.Now().Add(20 * time.Second)
	for {
		var capture []string
		for i := range samples {
			capture = append(capture, "display-message", "-p", "@@WINDOW@@", ";",
				"capture-pane", "-p", "-t", fmt.Sprintf("base:%d", i+1), ";")
		}
		got := run(t, ts, capture...)
		parts := strings.Split(got, "@@WINDOW@@\n")[1:]
		done := 0
		for i, p := range parts {
			if before, _, ok := strings.Cut(p, "@@END@@"); ok && i < len(out) {
				out[i] = strings.Split(strings.TrimSuffix(before, "\n"), "\n")
				done++
			}
		}
		if done == len(samples) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d windows printed their samples", done, len(samples))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run is ts.MustRun for a fuzz target too (tmuxtest reports to the F,
// which must not be used inside the target).
func run(t testing.TB, ts *tmuxtest.Server, args ...string) string {
	t.Helper()
	out, err := ts.Run(args...)
	if err != nil {
		msg := err.Error()
		if len(msg) > 400 {
			msg = msg[:200] + " ... " + msg[len(msg)-200:]
		}
		t.Fatal(msg)
	}
	return out
}

// decoded is what the decoder makes of a sample: its lines, the unfinished
// last one included, trailing blanks removed (capture-pane removes them).
func decoded(sample string) []string {
	var d termtext.Decoder
	lines := d.Write([]byte(sample + "\x18\r\n"))
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " ")
	}
	return out
}

func newDiffServer(t testing.TB) *tmuxtest.Server {
	ts := tmuxtest.NewWith(t)
	// Wide enough that no sample wraps or reaches the right margin.
	ts.MustRun("new-session", "-d", "-s", "base", "-x", "2000", "-y", "60", ";",
		"set-option", "-g", "default-size", "2000x60", ";",
		"set-option", "-g", "remain-on-exit", "on")
	return ts
}

func compareWithTmux(t testing.TB, ts *tmuxtest.Server, dir string, samples []string) {
	t.Helper()
	screens := tmuxScreens(t, ts, dir, samples)
	for i, s := range samples {
		want := trimmed(screens[i])
		if got := decoded(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("sample %q:\n decoder %q\n tmux    %q", s, got, want)
		}
	}
}

// randomSample draws up to n tokens of diffAlphabet.
func randomSample(r *rand.Rand, n int) string {
	var b strings.Builder
	for range 1 + r.IntN(n) {
		b.WriteString(diffAlphabet[r.IntN(len(diffAlphabet))])
	}
	return b.String()
}

// TestDecoderMatchesTmux prints seeded random byte strings into tmux panes
// and checks that the decoder sees the same text as capture-pane. CI runs a
// short round; TMUX_MCP_DIFF_ROUNDS runs more (FuzzDecoderVsTmux explores
// with the fuzzing engine instead).
func TestDecoderMatchesTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("needs tmux")
	}
	t.Parallel()
	rounds := 2
	if v := os.Getenv("TMUX_MCP_DIFF_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}
	ts := newDiffServer(t)
	dir := t.TempDir()
	// The cases of issue 9 item 4 first: an unterminated sequence at the end
	// of a command's output, followed by more text.
	fixed := []string{
		"a\x1b]0;title", "a\x1bP", "a\x1b_abc", "a\x1b", "a\x1b[12",
		"a\x1b]0;title\x1b[31mb", "a\x1b_abc\x18b", "a\x1b^pm\x1ab", "x\x1bXsos\x1b\\y",
		"t\x1bkname\x1b\\u", "a\x1b[1\r\n2Gb", "abc\x1b[2Pd", "abcdef\x1b[3G\x1b[2Xz", "abcd\x1b[2G\x1b[1K",
		"ab\x1b[0Gc", "ab\x1b[5;3Gc", "ab\x1b[?2Kc", "abc\x1b[99999999999Dd", "a\x1b]0;t\x07b\x1b]0;u\x1b\\c",
	}
	r := rand.New(rand.NewPCG(9, 4))
	for round := range rounds {
		samples := fixed
		if round > 0 {
			samples = nil
		}
		for len(samples) < 60 {
			if s := randomSample(r, 24); !dcsPassthrough.MatchString(s) {
				samples = append(samples, s)
			}
		}
		compareWithTmux(t, ts, dir, samples)
	}
}

// FuzzDecoderVsTmux is the differential test under the fuzzing engine:
// each input byte picks a token of diffAlphabet. scripts/fuzz.sh runs it.
func FuzzDecoderVsTmux(f *testing.F) {
	f.Add([]byte{0, 6, 7, 20})
	f.Add([]byte{0, 3, 24, 0, 31})
	ts := newDiffServer(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || len(b) > 48 {
			return
		}
		var s strings.Builder
		for _, c := range b {
			s.WriteString(diffAlphabet[int(c)%len(diffAlphabet)])
		}
		if dcsPassthrough.MatchString(s.String()) {
			return
		}
		compareWithTmux(t, ts, dir, []string{s.String()})
	})
}
