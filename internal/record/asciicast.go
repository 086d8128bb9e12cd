// Package record writes what happens in a terminal as an asciicast v2
// recording (https://docs.asciinema.org/manual/asciicast/v2/), the format
// asciinema plays: a JSON header line, then one JSON line per event, each
// with its time in seconds from the start. It knows nothing of tmux or
// MCP: the caller hands it output, input, resizes and gaps with the time
// each happened, and it keeps the file valid whatever happens next (every
// line is written whole, times never go back, the last line says why the
// recording ended) within its size and duration limits.
package record

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tmux-mcp/tmux-mcp/internal/jsonstr"
)

// Header is the first line of a recording.
type Header struct {
	Width, Height int       // the terminal's size when the recording starts
	Timestamp     time.Time // when it starts
	Title         string
	// Env is the header's env: asciinema keeps TERM and SHELL there.
	Env map[string]string
}

// Event kinds of asciicast v2.
const (
	KindOutput = "o" // what the terminal printed
	KindInput  = "i" // what was typed into it
	KindResize = "r" // its new size, "COLSxROWS"
	KindMarker = "m" // a labelled point: here, a gap or the end
)

// Event is one line after the header.
type Event struct {
	At   time.Time
	Kind string
	Data string
}

// appendHeader appends the header line (with its newline).
func appendHeader(dst []byte, h Header) []byte {
	v := struct {
		Version   int               `json:"version"`
		Width     int               `json:"width"`
		Height    int               `json:"height"`
		Timestamp int64             `json:"timestamp,omitempty"`
		Title     string            `json:"title,omitempty"`
		Env       map[string]string `json:"env,omitempty"`
	}{2, h.Width, h.Height, 0, h.Title, h.Env}
	if !h.Timestamp.IsZero() {
		v.Timestamp = h.Timestamp.Unix()
	}
	return appendJSON(dst, v)
}

// appendEvent appends one event line: [seconds, kind, data].
func appendEvent(dst []byte, seconds float64, kind, data string) []byte {
	dst = append(dst, '[')
	dst = strconv.AppendFloat(dst, seconds, 'f', -1, 64)
	dst = append(dst, ", "...)
	dst = appendJSONString(dst, kind)
	dst = append(dst, ", "...)
	dst = appendJSONString(dst, data)
	return append(dst, "]\n"...)
}

// appendJSONString appends s as a JSON string, as encoding/json would
// but without escaping <, > and & (a recording is read as text, where
// \u003c is noise) and without its allocations (a flooding pane makes an
// event per read). A byte that is not UTF-8 becomes U+FFFD, so every line
// reads back as UTF-8, which asciinema insists on.
func appendJSONString(dst []byte, s string) []byte { return jsonstr.Text(dst, s) }

// appendJSON appends v's JSON with a newline, without escaping <, > and &.
func appendJSON(dst []byte, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the header's ints and strings always encode
	return append(dst, b.Bytes()...)
}

// seconds is an event time as asciinema writes it: seconds from the start,
// to the microsecond.
func seconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1e6) / 1e6
}

// splitUTF8 cuts data before an incomplete UTF-8 sequence at its end (a
// character that an output event split in two), so that the next event
// can complete it instead of both halves turning into U+FFFD.
func splitUTF8(data []byte) (whole, rest []byte) {
	// A sequence is at most 4 bytes: look at the last 3 for its start.
	for i := len(data) - 1; i >= 0 && i >= len(data)-3; i-- {
		b := data[i]
		if b < utf8.RuneSelf {
			return data, nil // ASCII: nothing pending
		}
		if utf8.RuneStart(b) {
			if utf8.FullRune(data[i:]) {
				return data, nil
			}
			return data[:i], data[i:]
		}
	}
	return data, nil
}
