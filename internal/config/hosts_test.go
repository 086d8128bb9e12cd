package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	cases := []struct {
		in   string
		want []Host
		err  string // substring of the error; "" means no error
	}{
		{in: "", want: nil},
		{in: "build=buildbox", want: []Host{{Name: "build", Destination: "buildbox"}}},
		{in: " build = me@box.example ,gpu=ssh://me@gpu.lan:2222?tmux=/opt/bin/tmux&socket=work",
			want: []Host{{Name: "build", Destination: "me@box.example"},
				{Name: "gpu", Destination: "ssh://me@gpu.lan:2222", TmuxBin: "/opt/bin/tmux", Socket: "work"}}},
		{in: "a.b_c-d=[::1]", want: []Host{{Name: "a.b_c-d", Destination: "[::1]"}}},
		{in: "x=h?socket=s1", want: []Host{{Name: "x", Destination: "h", Socket: "s1"}}},
		// Option injection and shell syntax never pass.
		{in: "x=-oProxyCommand=touch_pwned", err: "must not start with '-'"},
		{in: "x=host -oProxyCommand=x", err: "spaces"},
		{in: "x=h$(id)", err: "shell characters"},
		{in: "x=h;id", err: "shell characters"},
		{in: "x=`id`", err: "shell characters"},
		{in: "-x=host", err: "host name"},
		{in: "a b=host", err: "host name"},
		{in: "local=host", err: "host name"},
		{in: "x=h?tmux=/bin/tmux;id", err: "tmux"},
		{in: "x=h?tmux=-V", err: "tmux"},
		{in: "x=h?socket=$(id)", err: "socket"},
		{in: "x=h?socket=/tmp/s", err: "not a path"},
		{in: "x=h?tmux=a&tmux=b", err: "given 2 times"},
		{in: "x=h?user=root", err: "unknown option"},
		{in: "x=h,x=g", err: "given twice"},
		{in: "x", err: "not name=destination"},
		{in: "x=", err: "destination"},
		{in: "a=h,,b=g", err: "entry 2 of 3: empty"},
	}
	for _, tc := range cases {
		got, err := ParseHosts(tc.in, "TMUX_MCP_HOSTS")
		if tc.err != "" {
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(tc.in, "pwned") && strings.Contains(err.Error(), "pwned") {
				t.Errorf("%q: the error repeats the value: %v", tc.in, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSSHCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "ssh", want: []string{"ssh"}},
		{in: "  ssh   -F  /tmp/cfg ", want: []string{"ssh", "-F", "/tmp/cfg"}},
		{in: `ssh -F '/path with space/cfg' -o "ProxyJump=a b"`, want: []string{"ssh", "-F", "/path with space/cfg", "-o", "ProxyJump=a b"}},
		{in: `ssh -i a\ b "x\"y\\z" 'it''s'`, want: []string{"ssh", "-i", "a b", `x"y\z`, "its"}},
		{in: `ssh $HOME ~/x * $(id)`, want: []string{"ssh", "$HOME", "~/x", "*", "$(id)"}},
		{in: `ssh ''`, want: []string{"ssh", ""}},
		{in: "/usr/bin/ssh\t-v", want: []string{"/usr/bin/ssh", "-v"}},
		{in: "", err: "names no command"},
		{in: "   ", err: "names no command"},
		{in: "'' -v", err: "names no command"},
		{in: `ssh 'open`, err: "unterminated"},
		{in: `ssh "open`, err: "unterminated"},
		{in: `ssh \`, err: "backslash"},
		{in: "ssh \x00", err: "NUL"},
	}
	for _, tc := range cases {
		got, err := ParseSSHCommand(tc.in, "TMUX_MCP_SSH_COMMAND")
		if tc.err != "" {
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestLoadHosts: the settings come from the flag or the variable, and a
// bad value stops start-up naming its source.
func TestLoadHosts(t *testing.T) {
	env := map[string]string{"TMUX_MCP_HOSTS": "b=box", "TMUX_MCP_SSH_COMMAND": "ssh -F /x"}
	c, _, err := Load(func(k string) string { return env[k] }, nil)
	if err != nil || len(c.Hosts) != 1 || c.Hosts[0].Name != "b" || !reflect.DeepEqual(c.SSHCommand, []string{"ssh", "-F", "/x"}) {
		t.Fatalf("%+v %v", c, err)
	}
	c, _, err = Load(func(k string) string { return env[k] }, map[string]string{"hosts": "c=-oX"})
	if err == nil || !strings.Contains(err.Error(), "--hosts") {
		t.Fatalf("flag error = %v", err)
	}
	if c.From["hosts"] != "--hosts" || c.From["ssh-command"] != "TMUX_MCP_SSH_COMMAND" {
		t.Fatalf("From = %v", c.From)
	}
}
