package audit

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/jsonstr"
)

// appendRecord appends r as json.Marshal encodes it, byte for byte
// (TestAppendRecordIsMarshal, FuzzAppendRecord), without reflection: the
// audit line is written for every tool call, and encoding the Record
// through encoding/json cost a few µs of each get_pane_info. Values it
// does not know (none that Redact produces) go through json.Marshal. It
// reports false where json.Marshal would fail (a time outside years
// 0-9999, a NaN or infinite duration).
func appendRecord(b []byte, r *Record) ([]byte, bool) {
	if y := r.Time.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if math.IsNaN(r.DurationMS) || math.IsInf(r.DurationMS, 0) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","tool":`...)
	b = appendString(b, r.Tool)
	b = append(b, `,"outcome":`...)
	b = appendString(b, r.Outcome)
	b = appendOmitEmpty(b, `,"error_type":`, r.ErrorType)
	b = append(b, `,"duration_ms":`...)
	b = appendFloat(b, r.DurationMS)
	b = appendOmitEmpty(b, `,"client_id":`, r.Client)
	b = appendOmitEmpty(b, `,"client":`, r.Identity)
	b = appendOmitEmpty(b, `,"session_id":`, r.Session)
	b = append(b, `,"request_id":`...)
	b = appendString(b, r.RequestID)
	b = appendOmitEmpty(b, `,"parent_request_id":`, r.Parent)
	b = append(b, `,"args":`...)
	var ok bool
	if b, ok = appendValue(b, r.Args); !ok {
		return b, false
	}
	b = appendOmitEmpty(b, `,"event":`, r.Event)
	b = appendOmitEmpty(b, `,"confirm_id":`, r.ConfirmID)
	b = appendOmitEmpty(b, `,"question":`, r.Question)
	b = appendOmitEmpty(b, `,"answer":`, r.Answer)
	return append(b, '}'), true
}

func appendOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendValue appends a decoded JSON value (and Digest, which Redact puts
// in) as json.Marshal would.
func appendValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return b, false
		}
		return appendFloat(b, x), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			var ok bool
			if b, ok = appendValue(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case Digest:
		b = append(b, `{"len":`...)
		b = strconv.AppendInt(b, int64(x.Len), 10)
		b = append(b, `,"sha256_prefix":`...)
		return append(appendString(b, x.SHA256Prefix), '}'), true
	}
	raw, err := json.Marshal(v) // json.Number, and anything else
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// appendFloat is encoding/json's float64 encoding.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString is encoding/json's string encoding with HTML escaping (what
// json.Marshal does).
func appendString(b []byte, s string) []byte { return jsonstr.Marshal(b, s) }

// lineBufs recycles the buffers audit lines are encoded into.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}
