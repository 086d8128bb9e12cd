package tmux

import (
	"errors"
	"reflect"
	"testing"
)

// TestRemoteWords: only plain words reach a remote command line; anything
// a shell of any family would interpret, or that could become an option,
// is refused.
func TestRemoteWords(t *testing.T) {
	cases := []struct {
		bin  string
		sock Socket
		want []string
		bad  bool
	}{
		{bin: "tmux", want: []string{"exec", "tmux", "-u"}},
		{bin: "/opt/bin/tmux-3.4", sock: Socket{Name: "work"}, want: []string{"exec", "/opt/bin/tmux-3.4", "-u", "-L", "work"}},
		{bin: "tmux", sock: Socket{Path: "/tmp/tmux-0/s.1"}, want: []string{"exec", "tmux", "-u", "-S", "/tmp/tmux-0/s.1"}},
		{bin: "tmux;id", bad: true},
		{bin: "-V", bad: true},
		{bin: "tmux id", bad: true},
		{bin: "$(id)", bad: true},
		{bin: "`id`", bad: true},
		{bin: "~/tmux", bad: true},
		{bin: "tmux*", bad: true},
		{bin: "a&b", bad: true},
		{bin: "a|b", bad: true},
		{bin: "(id)", bad: true},
		{bin: "{a,b}", bad: true},
		{bin: "a\nb", bad: true},
		{bin: "!!", bad: true},
		{bin: "tmux", sock: Socket{Name: "-f/etc/passwd"}, bad: true},
		{bin: "tmux", sock: Socket{Name: "a'b"}, bad: true},
		{bin: "tmux", sock: Socket{Path: "/tmp/a b"}, bad: true},
		{bin: "tmux", sock: Socket{Path: "/tmp/$HOME"}, bad: true},
		{bin: "tmux", sock: Socket{Path: "/tmp/#x"}, bad: true},
	}
	for _, tc := range cases {
		got, err := remoteWords(tc.bin, tc.sock)
		if tc.bad {
			if !errors.Is(err, ErrBadRemoteWord) {
				t.Errorf("%q %v: accepted as %q", tc.bin, tc.sock, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q %v: %q %v, want %q", tc.bin, tc.sock, got, err, tc.want)
		}
	}
	for id, want := range map[string]string{"$0": "'$0'", "$123": "'$123'", "$1;id": "", "$": "", "$1'": "", "1": ""} {
		got, err := remoteSessionWord(id)
		if (want == "") != (err != nil) || got != want {
			t.Errorf("session %q: %q %v, want %q", id, got, err, want)
		}
	}
}
