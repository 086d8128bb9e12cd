package audit

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// appendRecord writes exactly what json.Marshal writes for a Record, and
// refuses exactly what it refuses.
func TestAppendRecordIsMarshal(t *testing.T) {
	tricky := []string{"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnl\ncr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "é ✓ 😀", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", strings.Repeat("x", 300)}
	at := time.Date(2026, 12, 3, 17, 4, 5, 123456789, time.UTC)
	var records []Record
	for _, s := range tricky {
		records = append(records, Record{Time: at, Tool: s, Outcome: "ok", ErrorType: s, DurationMS: 0.25, Client: s,
			Identity: s, Session: s, RequestID: "7", Parent: s, Args: map[string]any{s: s}, Event: s, ConfirmID: s, Question: s, Answer: s})
	}
	for _, d := range []float64{0, 0.001, 1e-7, 1.5e-6, 123.456, 1e20, 1e21, 3e300, -2.5, math.Copysign(0, -1)} {
		records = append(records, Record{Time: at, Tool: "t", Outcome: "error", DurationMS: d, RequestID: "1", Args: map[string]any{}})
	}
	records = append(records,
		Record{Time: at.In(time.FixedZone("x", 3600)), Tool: "zone"},
		Record{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Tool: "no nanos", Args: nil},
		Record{Time: at, Tool: "args", Args: map[string]any{
			"n": json.Number("12.50"), "f": 3.0, "b": true, "nil": nil, "list": []any{"a", 1.5, false, nil, []any{}, map[string]any{}},
			"nested": map[string]any{"z": "<", "a": []any{map[string]any{"k": "v"}}}, "digest": DigestOf("secret"),
			"empty_list": []any{}, "nil_list": []any(nil), "nil_map": map[string]any(nil), "B": "upper sorts first",
		}},
		Record{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Tool: "year 10000"},
		Record{Time: at, Tool: "nan", DurationMS: math.NaN()},
		Record{Time: at, Tool: "inf in args", Args: map[string]any{"x": math.Inf(1)}},
	)
	for _, r := range records {
		want, err := json.Marshal(r)
		got, ok := appendRecord(nil, &r)
		if ok != (err == nil) {
			t.Errorf("%q: appendRecord ok=%v, json.Marshal error %v", r.Tool, ok, err)
			continue
		}
		if ok && string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", r.Tool, got, want)
		}
	}
}

func FuzzAppendRecord(f *testing.F) {
	f.Add("get_pane_info", `{"pane_id":"%0","keys":"secret"}`, 0.123, int64(1764781445123456789))
	f.Add("<&>", `{"a":[1,"\u2028",{"b":null}]}`, 1e-9, int64(0))
	f.Fuzz(func(t *testing.T, tool, args string, d float64, ns int64) {
		var decoded map[string]any
		dec := json.NewDecoder(strings.NewReader(args))
		dec.UseNumber()
		_ = dec.Decode(&decoded)
		r := Record{Time: time.Unix(0, ns).UTC(), Tool: tool, Outcome: tool, DurationMS: d, RequestID: tool, Args: Redact(decoded)}
		want, err := json.Marshal(r)
		got, ok := appendRecord(nil, &r)
		if ok != (err == nil) {
			t.Fatalf("appendRecord ok=%v, json.Marshal error %v", ok, err)
		}
		if ok && string(got) != string(want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkLog(b *testing.B) {
	l := New(discard{})
	r := Record{Time: time.Now().UTC(), Tool: "get_pane_info", Outcome: "ok", DurationMS: 0.412, Client: "claude-code",
		RequestID: "12345", Args: Redact(map[string]any{"pane_id": "%0"})}
	b.ReportAllocs()
	for b.Loop() {
		l.Log(r)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
