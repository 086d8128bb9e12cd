package remote

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArgv: every ssh process gets the user's words first, then BatchMode,
// the connect timeout and keep-alives, "--" and the destination; nothing
// weakens host key checking; the remote command is the words joined.
func TestArgv(t *testing.T) {
	h, err := New(Spec{Name: "b", Destination: "me@box"}, Options{SSHCommand: []string{"ssh", "-F", "/cfg"},
		ConnectTimeout: 1500 * time.Millisecond, AliveInterval: 2 * time.Second, AliveCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := h.MasterArgv("/d/m0")
	want := []string{"ssh", "-F", "/cfg", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=2", "-o", "ServerAliveInterval=2",
		"-o", "ServerAliveCountMax=4", "-N", "-M", "-o", "ControlPersist=no", "-o", "ControlPath=/d/m0", "--", "me@box"}
	if !slices.Equal(m, want) {
		t.Fatalf("master argv\n got %q\nwant %q", m, want)
	}
	// A mux client, on a master the test puts in place.
	h.masters = []*master{{path: "/d/m0", done: make(chan struct{})}}
	argv, release, err := h.Start(context.Background(), []string{"exec", "tmux", "-u", "source-file", "-"})
	if err != nil {
		t.Fatal(err)
	}
	if h.masters[0].used != 1 {
		t.Fatalf("channel not counted")
	}
	release()
	release() // once only
	if h.masters[0].used != 0 {
		t.Fatalf("channel count %d after release", h.masters[0].used)
	}
	tail := argv[len(argv)-3:]
	if !slices.Equal(tail, []string{"--", "me@box", "exec tmux -u source-file -"}) || !slices.Contains(argv, "ControlPath=/d/m0") ||
		!slices.Contains(argv, "ControlMaster=no") || !slices.Contains(argv, "BatchMode=yes") {
		t.Fatalf("client argv %q", argv)
	}
	for _, a := range append(argv, m...) {
		if strings.Contains(a, "StrictHostKeyChecking") || strings.Contains(a, "UserKnownHostsFile") {
			t.Fatalf("host key checking touched: %q", a)
		}
	}
}

func TestCheckHost(t *testing.T) {
	for _, n := range []string{"", "-x", "local", "a b", "a/b", "a:b", "é", strings.Repeat("a", 65)} {
		if err := CheckName(n); !errors.Is(err, ErrBadHost) {
			t.Errorf("name %q accepted", n)
		}
	}
	for _, n := range []string{"a", "build-1.lan", "A_b.C"} {
		if err := CheckName(n); err != nil {
			t.Errorf("name %q: %v", n, err)
		}
	}
	for _, d := range []string{"", "-oProxyCommand=x", "-F/x", "a b", "a\tb", "h;x", "h|x", "h&x", "$h", "`h`", "'h'", "\"h\"", "h\\x", "h\x00"} {
		if err := CheckDestination(d); !errors.Is(err, ErrBadHost) {
			t.Errorf("destination %q accepted", d)
		}
	}
	for _, d := range []string{"box", "me@box", "ssh://me@box:2222", "me@[::1]", "alias-1.x"} {
		if err := CheckDestination(d); err != nil {
			t.Errorf("destination %q: %v", d, err)
		}
	}
	if _, err := New(Spec{Name: "x", Destination: "h", TmuxBin: "tmux;id"}, Options{}); err == nil {
		t.Error("unsafe tmux binary accepted")
	}
	if _, err := New(Spec{Name: "x", Destination: "h", Socket: "$(id)"}, Options{}); err == nil {
		t.Error("unsafe socket accepted")
	}
}
