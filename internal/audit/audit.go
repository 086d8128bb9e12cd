// Package audit writes one JSON line per tool call: who called what, how it
// ended and how long it took, with every sensitive argument replaced by a
// length and a hash prefix. The digest lets an operator match a call against
// a value they already know without the log ever holding the value.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// SensitiveKeys are argument names whose values are never logged, whatever
// their JSON type and however deeply they are nested (batch operations carry
// the arguments of other tools).
var SensitiveKeys = map[string]bool{
	"keys": true, "text": true, "command": true, "value": true,
	"content": true, "shell": true, "environment": true,
}

// SecretMark stands for a sensitive value of a call marked secret.
const SecretMark = "[secret: not recorded]"

// MaxString is the longest other string logged in clear; longer ones are cut.
const MaxString = 200

// Record is one audit line.
type Record struct {
	Time       time.Time      `json:"time"`
	Tool       string         `json:"tool"`
	Outcome    string         `json:"outcome"` // "ok" or "error"
	ErrorType  string         `json:"error_type,omitempty"`
	DurationMS float64        `json:"duration_ms"`
	Client     string         `json:"client_id,omitempty"` // the MCP clientInfo name the client announced (self-declared)
	Identity   string         `json:"client,omitempty"`    // the authenticated caller: the token's name over HTTP
	Session    string         `json:"session_id,omitempty"`
	RequestID  string         `json:"request_id"`
	Parent     string         `json:"parent_request_id,omitempty"` // set on calls nested in a batch
	Args       map[string]any `json:"args"`

	// A confirmation (the person asked before a call runs) adds records
	// of its own: Event "confirm_question" with the question as sent,
	// typed input digested (QuestionText), then "confirm_answer" with
	// the Answer; ConfirmID ties them to each other across the rounds of
	// a 2026-07-28 call.
	Event     string `json:"event,omitempty"`
	ConfirmID string `json:"confirm_id,omitempty"`
	Question  string `json:"question,omitempty"`
	Answer    string `json:"answer,omitempty"`
}

// Logger writes records as JSON lines; it is safe for concurrent use.
type Logger struct {
	mu sync.Mutex
	w  io.Writer
	c  io.Closer
}

// New returns a logger writing to w.
func New(w io.Writer) *Logger { return &Logger{w: w} }

// Open appends to the file at path, creating it with mode 0600 (the log
// names panes, sessions and paths even though it holds no secrets).
func Open(path string) (*Logger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Logger{w: f, c: f}, nil
}

// Log writes one record. A nil Logger discards.
func (l *Logger) Log(r Record) {
	if l == nil {
		return
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	b, ok := appendRecord((*bp)[:0], &r)
	if !ok {
		return // what json.Marshal would have refused
	}
	b = append(b, '\n')
	if cap(b) <= 64<<10 {
		*bp = b // a huge line's buffer is not kept
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}

// Close closes the file, if the logger owns one.
func (l *Logger) Close() error {
	if l == nil || l.c == nil {
		return nil
	}
	return l.c.Close()
}

// Digest is what a sensitive value becomes.
type Digest struct {
	Len          int    `json:"len"`
	SHA256Prefix string `json:"sha256_prefix"`
}

// DigestOf summarizes any JSON value: a string by its characters and UTF-8
// bytes, anything else by its compact JSON text.
func DigestOf(v any) Digest {
	h := sha256.New()
	n := 0
	if s, ok := v.(string); ok {
		// In pieces through a small buffer: the hash takes no string, and
		// a []byte of a 4 MiB content would copy it whole.
		var buf [4096]byte
		for rest := s; rest != ""; {
			k := copy(buf[:], rest)
			h.Write(buf[:k])
			rest = rest[k:]
		}
		n = utf8.RuneCountInString(s)
	} else {
		b, _ := json.Marshal(v)
		h.Write(b)
		n = len(b)
	}
	return Digest{Len: n, SHA256Prefix: hex.EncodeToString(h.Sum(nil))[:12]}
}

// Redact returns a copy of decoded JSON arguments that is safe to log.
func Redact(args map[string]any) map[string]any {
	out, _ := redact(args, false).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// RedactSecret is Redact for a call whose input turned out to be secret
// though not marked so (typed at a password prompt, and refused): its
// sensitive values leave no digest either.
func RedactSecret(args map[string]any) map[string]any {
	out, _ := redact(args, true).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func redact(v any, secretCall bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		// A call that marks its input secret (send_and_wait at a password
		// prompt) leaves no trace of it, not even a digest: a short
		// passphrase's hash prefix could be brute-forced.
		secret, _ := x["secret"].(bool)
		secret = secret || secretCall
		for k, val := range x {
			switch {
			case SensitiveKeys[k] && secret:
				out[k] = SecretMark
			case !SensitiveKeys[k] || val == nil:
				out[k] = redact(val, secretCall)
			case k == "environment":
				// A mapping keeps its variable names; anything else (a JSON
				// string holding one, a list...) is one digest.
				if m, ok := val.(map[string]any); ok {
					env := make(map[string]any, len(m))
					for ek, ev := range m {
						env[ek] = DigestOf(ev)
					}
					out[k] = env
				} else {
					out[k] = DigestOf(val)
				}
			default:
				out[k] = DigestOf(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redact(e, secretCall)
		}
		return out
	case string:
		if utf8.RuneCountInString(x) > MaxString {
			r := []rune(x)
			return string(r[:MaxString]) + "...<truncated>"
		}
		return x
	}
	return v
}
