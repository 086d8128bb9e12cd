package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// largeContent is n bytes of printable text in 80-column lines, as a
// client would stage a file with load_buffer: each byte is one byte of the
// JSON body (newlines are two).
func largeContent(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		if b.Len()%81 == 80 {
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// resetPeak sets the process's VmHWM back to its VmRSS (clear_refs 5), so
// the next reading is the peak of what follows.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting VmHWM: %v", err)
	}
}

// TestHTTPMemoryAfterLargeRequests: large load_buffer calls over HTTP (the
// largest legitimate request, 3.9 MiB of a 4 MiB body cap) must not cost
// the daemon much more than their bodies at the peak, and the daemon gives
// the memory back once idle: its resident set is under 25 MB again within
// 30 s of the last one. Issue 21 measured 13 → 69 MB after one such call,
// 137 MB after eight at once, and no return while idle. One request, then
// eight at once; the figures are logged.
//
// The bound per request is 3 times its body for eight at once, and 5 times
// for a request alone: the Go SDK decodes a request through a json.Decoder
// that copies its input (mcp.readBatch, then the tool call's parameters),
// so while it parses a body it holds three copies of it (the body it read,
// the decoder's buffer, the parameters) and a lone request, whose collector
// has little else to reclaim, peaks near 3.5-4.5 times its body. The
// daemon's own copies are bounded (httpserve/memory.go, server/jsonstring.go).
func TestHTTPMemoryAfterLargeRequests(t *testing.T) {
	const (
		bodyBytes  = 39 << 20 / 10 // 3.9 MiB of content; its JSON body is 1.2% larger (a newline is 2 bytes)
		idleLimit  = 25 << 20
		giveBackIn = 30 * time.Second
	)
	ts := tmuxtest.New(t)
	token := newToken()
	h := startHTTPD(t, ts, nil, "TMUX_MCP_HTTP_TOKEN="+token, "TMUX_MCP_AUDIT_LOG=/dev/null")
	pid := h.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := dialHTTPD(ctx, h, token, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	content := largeContent(bodyBytes)
	load := func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "load_buffer", Arguments: map[string]any{"content": content}})
		if err != nil || res.IsError {
			t.Errorf("load_buffer: %v %s", err, resultText(res))
			return
		}
		name, _ := res.StructuredContent.(map[string]any)["buffer_name"].(string)
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_buffer", Arguments: map[string]any{"buffer_name": name}})
		if err != nil || res.IsError {
			t.Errorf("delete_buffer %q: %v %s", name, err, resultText(res))
		}
	}
	for range 20 { // warm: the daemon's steady state for small calls
		callOK(t, cs, "get_pane_info", map[string]any{"pane_id": "%0"})
	}
	// And the code of a load_buffer call is paged in: the resident set
	// counts the binary's pages too, and what is measured is the data.
	res := callOK(t, cs, "load_buffer", map[string]any{"content": content[:64<<10]})
	callOK(t, cs, "delete_buffer", map[string]any{"buffer_name": res.StructuredContent.(map[string]any)["buffer_name"]})
	time.Sleep(time.Second)
	before := procStatus(t, pid)
	t.Logf("idle before: VmRSS %.1f MB", mb(before.rss))

	phase := func(name string, n int, bound float64) {
		t.Helper()
		idle := procStatus(t, pid).rss
		resetPeak(t, pid)
		var wg sync.WaitGroup
		for range n {
			wg.Go(load)
		}
		wg.Wait()
		done := time.Now()
		peak := procStatus(t, pid).hwm
		growth := peak - idle
		t.Logf("%s: %d × %.1f MiB bodies: VmRSS %.1f MB before, peak %.1f MB (growth %.1f MB, %.2f× the bodies)",
			name, n, float64(bodyBytes)/(1<<20), mb(idle), mb(peak), mb(growth), float64(growth)/float64(n*bodyBytes))
		if limit := int64(bound * float64(n*bodyBytes)); growth > limit {
			t.Errorf("%s: peak VmRSS grew by %.1f MB, more than %g× the %d bodies (%.1f MB)", name, mb(growth), bound, n, mb(limit))
		}
		var rss int64
		for {
			rss = procStatus(t, pid).rss
			if rss < idleLimit || time.Since(done) > giveBackIn {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if rss >= idleLimit {
			t.Errorf("%s: VmRSS is %.1f MB %v after the last large request, want under %d MB within %v",
				name, mb(rss), giveBackIn, idleLimit>>20, giveBackIn)
		} else {
			t.Logf("%s: VmRSS %.1f MB %v after the last large request", name, mb(rss), time.Since(done).Round(100*time.Millisecond))
		}
	}
	phase("one request", 1, 5)
	phase("eight at once", 8, 3)
}
