package foreground

import "testing"

// TestTmuxCommandName pins the replica of tmux 3.3a's parse_window_name;
// the differential test in internal/server checks it against a live tmux.
func TestTmuxCommandName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bash", "bash"},
		{"-bash", "bash"},
		{"/usr/bin/python3", "python3"},
		{"/usr/bin/", "bin"},
		{"/", "/"},
		{"//", "/"},
		{"exec sleep", "sleep"},
		{"exec  -x", "x"},
		{"execsleep", "execsleep"},
		{`"quoted name" tail`, "quoted"},
		{`say "hi"`, "say"},
		{"/opt/weird dir/tool", "weird"},
		{"my prog ünï", "my"},
		{"café", "caf"},
		{"ünï", "ün"},
		{"ïï", "\xc3"},
		{"tool\t", "tool"},
		{"tool\x7f", "tool"},
		{"tool!", "tool!"},
		{"  - -x", "x"},
		{"-", ""},
		{" ", ""},
		{"sshd: user@pts/0", "sshd:"},
		{"/tmp/dir/ends.", "ends."},
	} {
		if got := TmuxCommandName(tc.in); got != tc.want {
			t.Errorf("TmuxCommandName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPaneProcCurrent: a read stands for tmux's answer only for the
// server's child on the pane's own terminal.
func TestPaneProcCurrent(t *testing.T) {
	pts5 := uint64(136<<8 | 5)                            // /dev/pts/5
	pts300 := uint64(136<<8 | 300&0xff | (300&^0xff)<<12) // /dev/pts/300
	read := PaneProc{PID: 10, PPID: 1, TTYNr: pts5, TPGID: 12, Command: "vim", Path: "/tmp", Read: true}
	for _, tc := range []struct {
		name   string
		p      PaneProc
		server int
		tty    string
		ok     bool
	}{
		{"the pane's", read, 1, "/dev/pts/5", true},
		{"another server's child", read, 2, "/dev/pts/5", false},
		{"server unknown", read, 0, "/dev/pts/5", false},
		{"another terminal", read, 1, "/dev/pts/6", false},
		{"a terminal name that is no pts here", read, 1, "/dev/pts/05", false},
		{"not read", PaneProc{PID: 10, PPID: 1, TTYNr: pts5}, 1, "/dev/pts/5", false},
		{"a high pts number", PaneProc{PID: 10, PPID: 1, TTYNr: pts300, Read: true, Command: "sh", Path: "/"}, 1, "/dev/pts/300", true},
	} {
		cmd, path, ok := tc.p.Current(tc.server, tc.tty)
		if ok != tc.ok || ok && (cmd != tc.p.Command || path != tc.p.Path) {
			t.Errorf("%s: got %q %q %v, want ok=%v", tc.name, cmd, path, ok, tc.ok)
		}
	}
}
