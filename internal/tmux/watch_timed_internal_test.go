package tmux

import (
	"strings"
	"testing"
)

// A timed subscription whose consumer falls behind by more than its
// buffer keeps the newest output and puts a gap where the oldest went,
// and reports the loss.
func TestTimedSubscriptionOverflow(t *testing.T) {
	defer func(n int) { maxSubscriptionBuffer = n }(maxSubscriptionBuffer)
	maxSubscriptionBuffer = 10
	s := &Subscription{timed: true, notify: make(chan struct{}, 1)}
	for _, d := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		s.push([]byte(d))
	}
	chunks := s.TakeChunks()
	var kinds []string
	var data []string
	for _, c := range chunks {
		kinds = append(kinds, map[ChunkKind]string{ChunkOutput: "o", ChunkGap: "gap", ChunkChanged: "changed"}[c.Kind])
		data = append(data, string(c.Data))
	}
	if got := strings.Join(kinds, ","); got != "gap,o,o" || strings.Join(data, "") != "ccccdddd" {
		t.Errorf("after overflow: %s %q", got, data)
	}
	if !s.Lost() {
		t.Error("the loss is not reported")
	}
	if len(s.TakeChunks()) != 0 || s.Take() != nil {
		t.Error("taken chunks came back")
	}
}
