package tmux_test

import (
	"context"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// LiteralFormat must make any text survive tmux's format expansion
// unchanged; rename-window expands its argument as a format.
func TestLiteralFormatRoundTrip(t *testing.T) {
	srv := tmuxtest.New(t)
	r := srv.Runner()
	for _, name := range []string{"plain", "#", "##", "a#b", "#{session_name}", "#(id)", "#[fg=red]x", "##[x", "#S #W", "x#", "%H:%M"} {
		if _, err := r.Run(context.Background(), srv.Socket, tmux.Command{"rename-window", "-t", "@0", "--", tmux.LiteralFormat(name, false)}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if got := srv.MustRun("display-message", "-p", "-t", "@0", "#{window_name}"); got != name {
			t.Errorf("%q came back as %q", name, got)
		}
	}
}

func TestParseRows(t *testing.T) {
	fields := []string{"a", "b", "c"}
	cases := []struct {
		out     string
		rows    int
		wantErr bool
		lastC   string
	}{
		{"", 0, false, ""},
		{"junk before\x1e1\x1f2\x1f3\n", 1, false, "3"},
		{"\x1e1\x1f2\x1f3\n\x1e4\x1f5\x1fpath\x1fwith\x1fseps\n", 2, false, "path\x1fwith\x1fseps"},
		{"\x1e1\x1f2\n", 0, true, ""},
		{"\x1e1\x1f2\x1fmulti\nline\n", 1, false, "multi\nline"},
	}
	for _, c := range cases {
		rows, err := tmux.ParseRows([]byte(c.out), fields)
		if (err != nil) != c.wantErr || len(rows) != c.rows {
			t.Errorf("%q: %d rows, err %v", c.out, len(rows), err)
			continue
		}
		if c.rows > 0 && rows[len(rows)-1]["c"] != c.lastC {
			t.Errorf("%q: last c = %q", c.out, rows[len(rows)-1]["c"])
		}
	}
}

func FuzzParseRows(f *testing.F) {
	f.Add([]byte("\x1e1\x1f2\x1f3\n"))
	f.Add([]byte("\x1e\x1e\x1f\n\x1f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = tmux.ParseRows(b, []string{"a", "b", "c"})
	})
}
