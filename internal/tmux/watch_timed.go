package tmux

import (
	"context"
	"time"
)

// ChunkKind says what a Chunk of a timed subscription is.
type ChunkKind uint8

const (
	// ChunkOutput is the data of one %output event.
	ChunkOutput ChunkKind = iota
	// ChunkGap: output is missing here (tmux paused the pane's stream, or
	// the subscription's buffer overflowed and its oldest chunks went).
	ChunkGap
	// ChunkChanged: the pane's window changed layout (a pane appeared,
	// died or was resized) or the pane's state changed (its program
	// exited): the consumer asks tmux what the pane is now.
	ChunkChanged
)

// Chunk is one event of a timed subscription with the time it arrived
// here. tmux's control-mode events carry no time of their own: arrival is
// the best clock there is, and a recording's timing is made of it.
type Chunk struct {
	At   time.Time
	Kind ChunkKind
	Data []byte // ChunkOutput only
}

// paneStateSubscription prefixes the name of the tmux format subscription
// (refresh-client -B) a watcher holds for each pane with a timed
// subscriber, followed by the pane id. It reports #{pane_dead}: a pane
// kept after its program exited (remain-on-exit) changes no layout and
// prints nothing, so without it a recording would never learn that its
// pane ended. tmux checks the format inside the server about once a
// second and reports only a change. It is a subscription to the pane's
// window, not to the pane: tmux 3.3a stops evaluating a pane's own
// subscriptions once its program has exited, which is the change to see.
const paneStateSubscription = "tmux-mcp-pane-"

// paneStateCommand makes the state subscription of pane, in window.
func paneStateCommand(pane, window string) Command {
	format := "#{P:#{?#{==:#{pane_id}," + pane + "},#{pane_dead},}}"
	return Command{"refresh-client", "-B", paneStateSubscription + pane + ":" + window + ":" + format}
}

// SubscribeTimed is Subscribe for a consumer that needs to know when each
// piece of output arrived (a recording): TakeChunks returns the events
// one by one with their arrival times, gaps and changes in place.
func (w *Watcher) SubscribeTimed(pane, window string) *Subscription {
	return w.subscribe(pane, window, true)
}

// SubscribeTimedAndRun is SubscribeAndRun for a timed subscription: it
// starts with exactly the events that follow the commands' replies.
func (w *Watcher) SubscribeTimedAndRun(ctx context.Context, pane, window string, cmds ...Command) (*Subscription, [][]byte, error) {
	return w.subscribeAndRun(ctx, w.SubscribeTimed(pane, window), cmds)
}

// timedLocked reports whether pane has a timed subscriber; w.mu is held.
func (w *Watcher) timedLocked(pane string) bool {
	for o := range w.subs[pane] {
		if o.timed {
			return true
		}
	}
	return false
}

// dropPaneStateLocked removes the pane's state subscription once its last
// timed subscriber is gone; w.mu is held.
func (w *Watcher) dropPaneStateLocked(pane string) {
	if !w.timedLocked(pane) {
		_ = w.send(Command{"refresh-client", "-B", paneStateSubscription + pane})
	}
}

// paneChanged tells the timed subscribers of pane that its state changed.
func (w *Watcher) paneChanged(pane string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.subs[pane] {
		s.changed()
	}
}

// changed records a change of the pane's window or state (a timed
// subscription keeps it in order with the output) and signals.
func (s *Subscription) changed() {
	s.mu.Lock()
	if s.timed && (len(s.chunks) == 0 || s.chunks[len(s.chunks)-1].Kind != ChunkChanged) {
		s.pushChunkLocked(Chunk{At: time.Now(), Kind: ChunkChanged})
	}
	s.mu.Unlock()
	s.signal()
}

// pushChunkLocked appends c; beyond maxSubscriptionBuffer bytes of output
// the oldest chunks are dropped and a gap takes their place. s.mu is held.
func (s *Subscription) pushChunkLocked(c Chunk) {
	s.chunks = append(s.chunks, c)
	s.chunkBytes += len(c.Data)
	if s.chunkBytes <= maxSubscriptionBuffer {
		return
	}
	i := 0
	for s.chunkBytes > maxSubscriptionBuffer && i < len(s.chunks)-1 {
		s.chunkBytes -= len(s.chunks[i].Data)
		i++
	}
	s.chunks = append([]Chunk{{At: s.chunks[i].At, Kind: ChunkGap}}, s.chunks[i:]...)
	s.lost = true
}

// TakeChunks returns and clears the events of a timed subscription
// received since the last call, oldest first.
func (s *Subscription) TakeChunks() []Chunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chunks
	s.chunks, s.chunkBytes = nil, 0
	return c
}
