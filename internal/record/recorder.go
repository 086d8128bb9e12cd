package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Limits bound one recording. Zero means no bound.
type Limits struct {
	MaxBytes    int64         // the file's size, header and final marker included
	MaxDuration time.Duration // from the start
}

// ErrStopped is returned for events given to a recording that has ended.
var ErrStopped = errors.New("the recording has stopped")

// Reasons a recording stops on its own (Stats.Reason); a caller's Stop
// gives its own.
const (
	ReasonSizeLimit     = "size limit reached"
	ReasonDurationLimit = "duration limit reached"
	ReasonWriteFailed   = "writing the file failed"
)

// endReserve is room kept below MaxBytes for the marker that ends the
// recording, so that the file is complete however the limit falls.
const endReserve = 256

// Recorder writes one recording. It is safe for concurrent use: output
// comes from one goroutine, input from the calls that type, and the stop
// from any of them or a timer.
type Recorder struct {
	mu      sync.Mutex
	w       io.WriteCloser
	start   time.Time
	limits  Limits
	last    time.Duration // the latest event's time: times never go back
	bytes   int64
	events  int
	pending []byte // an incomplete UTF-8 character at the end of the last output
	buf     []byte
	stopped bool
	reason  string
	err     error
	done    chan struct{}
	timer   *time.Timer
}

// Stats describe a recording so far.
type Stats struct {
	Bytes    int64
	Events   int           // events after the header
	Duration time.Duration // the latest event's time
	Stopped  bool
	Reason   string // why it stopped, as its last marker says
	Err      error  // a write that failed
}

// Create creates the file at path (mode 0600; an existing file is
// refused unless overwrite) and starts a recording in it; see New.
func Create(path string, overwrite bool, h Header, first []byte, lim Limits) (*Recorder, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, err
	}
	r, err := New(f, h, first, lim)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return r, nil
}

// New starts a recording on w: the header, then first (what the terminal
// shows at the start, drawn) as output at time 0, both written at once.
// The recording's clock starts at h.Timestamp (now when zero). w is
// closed when the recording stops.
func New(w io.WriteCloser, h Header, first []byte, lim Limits) (*Recorder, error) {
	if h.Timestamp.IsZero() {
		h.Timestamp = time.Now()
	}
	r := &Recorder{w: w, start: h.Timestamp, limits: lim, done: make(chan struct{})}
	line := appendHeader(nil, h)
	if len(first) > 0 {
		whole, rest := splitUTF8(first)
		r.pending = append(r.pending, rest...)
		line = appendEvent(line, 0, KindOutput, string(whole))
		r.events++
	}
	if lim.MaxBytes > 0 && int64(len(line))+endReserve > lim.MaxBytes {
		return nil, fmt.Errorf("the recording's size limit (%d bytes) is smaller than its start (%d bytes: the header and the screen)", lim.MaxBytes, len(line)+endReserve)
	}
	if _, err := w.Write(line); err != nil {
		return nil, err
	}
	r.bytes = int64(len(line))
	if lim.MaxDuration > 0 {
		r.mu.Lock() // the timer may fire at once: it stops under r.mu
		defer r.mu.Unlock()
		r.timer = time.AfterFunc(time.Until(r.start.Add(lim.MaxDuration)), func() {
			r.stopAt(r.start.Add(lim.MaxDuration), ReasonDurationLimit)
		})
	}
	return r, nil
}

// Start is when the recording's clock started.
func (r *Recorder) Start() time.Time { return r.start }

// Done is closed when the recording has stopped.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Output records what the terminal printed at a time. A character split
// between two outputs is written whole with the second.
func (r *Recorder) Output(at time.Time, data []byte) error {
	return r.Add(Event{At: at, Kind: KindOutput, Data: string(data)})
}

// Input records what was typed into the terminal.
func (r *Recorder) Input(at time.Time, data []byte) error {
	return r.Add(Event{At: at, Kind: KindInput, Data: string(data)})
}

// Resize records the terminal's new size.
func (r *Recorder) Resize(at time.Time, cols, rows int) error {
	return r.Add(Event{At: at, Kind: KindResize, Data: strconv.Itoa(cols) + "x" + strconv.Itoa(rows)})
}

// Marker records a labelled point (a gap in what was seen).
func (r *Recorder) Marker(at time.Time, label string) error {
	return r.Add(Event{At: at, Kind: KindMarker, Data: label})
}

// Add records events in order, in one write. An event past the duration
// limit, or one that would take the file past its size limit, ends the
// recording instead, with a marker saying which limit was reached;
// ErrStopped is returned then and for any event after the end.
func (r *Recorder) Add(evs ...Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return ErrStopped
	}
	r.buf = r.buf[:0]
	var stop, why string
	var stopAt time.Time
	n := r.events
	last := r.last
	pending := r.pending
	for _, ev := range evs {
		d := ev.At.Sub(r.start)
		if r.limits.MaxDuration > 0 && d > r.limits.MaxDuration {
			stop, stopAt = ReasonDurationLimit, r.start.Add(r.limits.MaxDuration)
			break
		}
		d = max(d, last)
		data := ev.Data
		if ev.Kind == KindOutput {
			b, rest := splitUTF8(append(pending, data...))
			pending = append([]byte(nil), rest...)
			if len(b) == 0 {
				continue
			}
			data = string(b)
		}
		mark := len(r.buf)
		r.buf = appendEvent(r.buf, seconds(d), ev.Kind, data)
		if r.limits.MaxBytes > 0 && r.bytes+int64(len(r.buf))+endReserve > r.limits.MaxBytes {
			r.buf = r.buf[:mark]
			stop, stopAt = ReasonSizeLimit, ev.At
			why = fmt.Sprintf(" (%d bytes)", r.limits.MaxBytes)
			break
		}
		last, n = d, n+1
	}
	if err := r.writeLocked(r.buf); err != nil {
		return err
	}
	r.events, r.last, r.pending = n, last, pending
	if stop != "" {
		r.endLocked(stopAt, stop+why)
		return ErrStopped
	}
	return nil
}

// writeLocked writes lines; a failed write ends the recording (the file
// can no longer be trusted to be whole). r.mu is held.
func (r *Recorder) writeLocked(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := r.w.Write(b); err != nil {
		r.err = err
		r.stopped, r.reason = true, ReasonWriteFailed
		if f, ok := r.w.(interface{ Truncate(int64) error }); ok {
			_ = f.Truncate(r.bytes) // a line written in part goes: the file stays whole lines
		}
		_ = r.w.Close()
		r.finishLocked()
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	r.bytes += int64(len(b))
	return nil
}

// Stop ends the recording at a time: a final marker gives the reason, and
// the file is closed. Stopping again does nothing.
func (r *Recorder) Stop(at time.Time, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return r.err
	}
	r.endLocked(at, reason)
	return r.err
}

func (r *Recorder) stopAt(at time.Time, reason string) { _ = r.Stop(at, reason) }

// endLocked writes the final marker, "recording stopped: <reason>", and
// closes the file. r.mu is held.
func (r *Recorder) endLocked(at time.Time, reason string) {
	d := max(at.Sub(r.start), r.last)
	if r.limits.MaxDuration > 0 {
		d = max(min(d, r.limits.MaxDuration), r.last)
	}
	line := appendEvent(nil, seconds(d), KindMarker, "recording stopped: "+reason)
	if len(r.pending) > 0 {
		// A character cut off at the end: what there is of it, as the
		// replacement character, before the marker.
		line = append(appendEvent(nil, seconds(d), KindOutput, string(r.pending)), line...)
		r.pending = nil
	}
	if err := r.writeLocked(line); err != nil {
		return
	}
	r.events++
	r.last = d
	r.stopped, r.reason = true, reason
	if err := r.w.Close(); err != nil && r.err == nil {
		r.err = err
	}
	r.finishLocked()
}

func (r *Recorder) finishLocked() {
	if r.timer != nil {
		r.timer.Stop()
	}
	select {
	case <-r.done:
	default:
		close(r.done)
	}
}

// Stats returns the recording's figures so far.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Bytes: r.bytes, Events: r.events, Duration: r.last, Stopped: r.stopped, Reason: r.reason, Err: r.err}
}
