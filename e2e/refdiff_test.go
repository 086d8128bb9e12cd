package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The differ of TestReference: it turns each server's answer into a
// normalised outcome and lists where two outcomes disagree.
//
// Normalisations (everything else is compared verbatim):
//   - paths: the world's TMUX_TMPDIR (each server has its own) becomes
//     <tmpdir> in every string, so socket paths and pipe targets compare;
//   - pids: values of keys ending in "pid" become <pid>;
//   - times: session_created, elapsed_seconds and any key ending in "_at",
//     "_time" or "activity" become <time>;
//   - ttys: pane_tty becomes <tty> (the pty number depends on what else
//     runs on the machine);
//   - opaque tokens: capture_since cursors, run ids and the per-call UUID
//     in agent buffer names become <cursor>, <run_id> and <uuid>;
//   - agent buffer names: the namespace prefix each server puts before the
//     logical name (libtmux_mcp_<uuid>_ / tmux_mcp_<owner>_<seq>_) becomes
//     <agent-buffer>_; clients treat the name as opaque (docs/tools.md);
//   - protocol envelope: _meta, resultType and cacheScope, which the SDKs add
//     to prompt, resource and completion answers, are dropped;
//   - ids: session ($N), window (@N) and pane (%N) ids are NOT renamed: both
//     worlds are built by the same tmux commands in the same order, so tmux
//     hands out the same ids, and a drift shows as a difference;
//   - JSON text content is parsed, also the text of content items nested in
//     batch rows, and compared as JSON (key order and
//     whitespace are not differences); other text is compared as a string;
//   - errors are compared on isError and _meta.error_type; both servers'
//     wording is kept for the table but is not a difference.

// outcome is one server's normalised answer to one call.
type outcome struct {
	IsError    bool
	Text       any // parsed JSON when the text is JSON, else the string
	Structured any
	Wording    string // error text, for the table only
	ErrorType  string // _meta.error_type of an error result
}

// normaliser rewrites the values that legitimately differ between worlds.
type normaliser struct {
	tmpdir string
}

var (
	bufferRe = regexp.MustCompile(`\b(lib)?tmux_mcp_[0-9a-zA-Z_<>-]*?_([A-Za-z0-9.-]+)\b`)
	uuidRe   = regexp.MustCompile(`[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[0-9a-f]{32}`)
	timeKeys = regexp.MustCompile(`(^session_created$|^elapsed_seconds$|_at$|_time$|activity$)`)
)

func (n normaliser) str(s string) string {
	if n.tmpdir != "" {
		s = strings.ReplaceAll(s, n.tmpdir, "<tmpdir>")
	}
	s = uuidRe.ReplaceAllString(s, "<uuid>")
	return bufferRe.ReplaceAllString(s, "<agent-buffer>_$2")
}

func (n normaliser) value(key string, v any) any {
	switch {
	case strings.HasSuffix(key, "pid") && v != nil:
		return "<pid>"
	case timeKeys.MatchString(key) && v != nil:
		return "<time>"
	case key == "pane_tty" && v != nil:
		return "<tty>"
	case key == "cursor" && v != nil:
		if _, isObj := v.(map[string]any); !isObj {
			return "<cursor>"
		}
	case key == "run_id" && v != nil:
		return "<run_id>"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = n.value(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.value(key, e)
		}
		return out
	case string:
		if key == "text" {
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				if _, isObj := inner.(map[string]any); isObj {
					return n.value("", inner)
				}
				if _, isArr := inner.([]any); isArr {
					return n.value("", inner)
				}
			}
		}
		return n.str(x)
	}
	return v
}

// outcomeOf normalises a result (or a protocol error) of one server.
func (n normaliser) outcomeOf(res *mcp.CallToolResult, err error) outcome {
	if err != nil {
		return outcome{IsError: true, Wording: "protocol error: " + n.str(err.Error())}
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		et, _ := res.Meta["error_type"].(string)
		return outcome{IsError: true, Wording: n.str(text.String()), ErrorType: et}
	}
	o := outcome{Text: n.str(text.String())}
	var parsed any
	if json.Unmarshal([]byte(text.String()), &parsed) == nil {
		if _, scalar := parsed.(string); !scalar && parsed != nil {
			o.Text = n.value("", parsed)
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		var s any
		_ = json.Unmarshal(raw, &s)
		o.Structured = n.value("", s)
	}
	return o
}

// difference is one disagreement between the reference and us.
type difference struct {
	Path string // "isError", "text", "structured.result[0].value", ...
	Ref  string
	Ours string
}

// diffOutcomes lists where two outcomes disagree, deepest path first.
func diffOutcomes(ref, ours outcome) []difference {
	if ref.IsError != ours.IsError {
		return []difference{{Path: "isError", Ref: brief(ref), Ours: brief(ours)}}
	}
	if ref.IsError {
		if ref.ErrorType != ours.ErrorType {
			return []difference{{Path: "error_type", Ref: ref.ErrorType, Ours: ours.ErrorType}}
		}
		return nil
	}
	var d []difference
	diffValues("text", ref.Text, ours.Text, &d)
	diffValues("structured", ref.Structured, ours.Structured, &d)
	return d
}

func brief(o outcome) string {
	if o.IsError {
		return "error: " + clipCell(o.Wording)
	}
	return "ok"
}

func diffValues(path string, a, b any, d *[]difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				*d = append(*d, difference{path + "." + k, "(absent)", show(bv)})
			case !bin:
				*d = append(*d, difference{path + "." + k, show(av), "(absent)"})
			default:
				diffValues(path+"."+k, av, bv, d)
			}
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], d)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*d = append(*d, difference{path, show(a), show(b)})
	}
}

func show(v any) string {
	if v == nil {
		return "null"
	}
	raw, _ := json.Marshal(v)
	return clipCell(string(raw))
}

// clipCell fits a value into one column of the differences table.
func clipCell(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}
