package tmux

import (
	"regexp"
	"testing"
)

// Nonces have the shape the framing expects and do not repeat.
func TestNewNonce(t *testing.T) {
	for _, n := range []int{8, 12, 32} {
		shape := regexp.MustCompile(`^tmux-mcp-[0-9a-f]{` + string(rune('0'+n*2/10)) + string(rune('0'+n*2%10)) + `}$`)
		seen := map[string]bool{}
		for range 2000 {
			s := newNonce(n)
			if !shape.MatchString(s) {
				t.Fatalf("newNonce(%d) = %q", n, s)
			}
			if seen[s] {
				t.Fatalf("newNonce(%d) repeated %q", n, s)
			}
			seen[s] = true
		}
	}
}

func BenchmarkNewNonce(b *testing.B) {
	done := make(chan bool)
	for b.Loop() {
		// On a fresh goroutine each time, as each MCP request runs.
		go func() { done <- len(newNonce(12)) > 0 }()
		<-done
	}
}
