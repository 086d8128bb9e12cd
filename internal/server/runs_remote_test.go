package server

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// startRemoteRun runs command with run_command on host box in the
// background, and returns once the run's start marker was seen; the
// returned func gives the call's result.
func startRemoteRun(t *testing.T, he *hostEnv, command string, timeout float64) (*runRecord, func() *mcp.CallToolResult) {
	t.Helper()
	waitShell(t, he.box, "%0")
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		ch <- he.call("run_command", on(map[string]any{"pane_id": "%0", "command": command, "timeout": timeout}))
	}()
	var rec *runRecord
	tmuxtest.WaitFor(t, 15*time.Second, func() bool {
		reg := he.srv.runs()
		reg.mu.Lock()
		defer reg.mu.Unlock()
		for _, r := range reg.runs {
			if r.host == "box" && r.hasBegun() {
				rec = r
				return true
			}
		}
		return false
	})
	return rec, func() *mcp.CallToolResult {
		select {
		case r := <-ch:
			return r
		case <-time.After(60 * time.Second):
			t.Fatal("run_command did not answer within 60s")
			return nil
		}
	}
}

// Issue 21 item 7: after a transparent reconnect (the ssh process carrying
// the run's output stream is killed, the host still answers) the result
// says output may have been missed (lines_missed, count unknown), and
// output_truncated counts only cut lines: it said true with 0 lines.
func TestRemoteRunReconnectFlags(t *testing.T) {
	he := newHostEnv(t)
	_, result := startRemoteRun(t, he, "sleep 2; echo after-$((1+1))", 20)
	if killed := sshtest.KillWatchers(); killed != 1 {
		t.Fatalf("killed %d watcher ssh processes, want 1", killed)
	}
	r := result()
	if r.IsError {
		t.Fatalf("run_command: %s", text(r))
	}
	var res RunCommandResult
	decodeStructured(t, r, &res)
	if res.ExitStatus == nil || *res.ExitStatus != 0 || !strings.Contains(strings.Join(res.Output, "\n"), "after-2") {
		t.Fatalf("result %+v", res)
	}
	if !res.LinesMissed || res.OutputTruncated || res.OutputTruncatedLines != 0 {
		t.Fatalf("lines_missed %v, output_truncated %v with %d lines: want missed, not truncated", res.LinesMissed, res.OutputTruncated, res.OutputTruncatedLines)
	}
	// Lines cut by max_lines are counted, and nothing is missed.
	var cut RunCommandResult
	he.ok("run_command", on(map[string]any{"pane_id": "%0", "command": "seq 5", "max_lines": 2, "timeout": 20}), &cut)
	if !cut.OutputTruncated || cut.OutputTruncatedLines != 3 || cut.LinesMissed || strings.Join(cut.Output, ",") != "4,5" {
		t.Fatalf("max_lines 2 of 5: %+v", cut)
	}
}

// Issue 21 item 6: sshd dies while a remote run_command waits. The answer
// says the host was lost, that the command's state is unknown and how to
// pick it up; once sshd is back, wait_for_run collects the run's result:
// its end marker arrives over the stream followed again, and the output
// printed meanwhile is marked missed. A command that ended while the host
// was unreachable is reported as such, not waited for until the timeout.
func TestRemoteRunSurvivesLostHost(t *testing.T) {
	cases := []struct {
		name    string
		command string
		down    time.Duration // how long sshd stays dead
		check   func(t *testing.T, r *mcp.CallToolResult)
	}{
		{"ends after the host is back", "sleep 4; echo done-$((2+3))", time.Second, func(t *testing.T, r *mcp.CallToolResult) {
			if r.IsError {
				t.Fatalf("wait_for_run: %s", text(r))
			}
			var res RunCommandResult
			decodeStructured(t, r, &res)
			if res.ExitStatus == nil || *res.ExitStatus != 0 || res.TimedOut || !strings.Contains(strings.Join(res.Output, "\n"), "done-5") || !res.LinesMissed {
				t.Fatalf("wait_for_run: %+v", res)
			}
		}},
		{"ended while the host was lost", "sleep 1; echo gone-$((2+3))", 3 * time.Second, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError || !strings.Contains(text(r), "ended while the connection to host box was lost") {
				t.Fatalf("wait_for_run: %s", text(r))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			he := newHostEnv(t)
			rec, result := startRemoteRun(t, he, tc.command, 30)
			lost := time.Now()
			he.sshd.Kill()
			r := result()
			if took := time.Since(lost); took > 10*time.Second {
				t.Errorf("run_command answered %v after the host was lost", took)
			}
			msg := text(r)
			for _, want := range []string{"host box", "state is unknown", "wait_for_run", rec.id} {
				if !r.IsError || !strings.Contains(msg, want) {
					t.Fatalf("run_command after sshd died: %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "went away") {
				t.Fatalf("a lost host reported as a lost pane: %s", msg)
			}
			time.Sleep(tc.down)
			he.sshd.Restart()
			tc.check(t, he.call("wait_for_run", map[string]any{"run_id": rec.id, "timeout": 20}))
		})
	}
}
