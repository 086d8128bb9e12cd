package server

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Lax argument coercion, as the reference's validation (pydantic 2 in lax
// mode) does it: models often send numbers and booleans as strings, and the
// reference accepts them. The table below was probed on the running
// reference (testdata/reference/coercion.json holds the probe's output, and
// TestCoercionMatchesReference replays it):
//
//   - boolean: true/false; the strings 1 on t true y yes and 0 off f false n
//     no in any letter case, without surrounding spaces; the numbers 0 and 1
//     (also 0.0 and 1.0). Nothing else (not 2, not "", not null).
//   - integer: an integral number (5.0 is 5, 5.5 is refused); a string that
//     is an integer after trimming spaces, with an optional sign, leading
//     zeros, underscores between digits and a ".0"-only fraction ("5.0");
//     true and false as 1 and 0. Not "1e2", "0x10" or "5.5"; nothing beyond
//     the range of int64.
//   - number: any number; a string that parses as a float after trimming
//     spaces (underscores between digits allowed); true and false as 1 and 0.
//     "inf" and "nan" parse in the reference, whose tools then refuse them;
//     here validation refuses them (an error either way).
//   - string, enum, array, object, null: strict, no coercion (a number is
//     not a string, "x" is not a list, "UP" is not "up").
//
// A union (["integer", "null"], anyOf) keeps a value that already matches
// one of its members strictly (as pydantic's smart mode does: "5" stays a
// string for string|integer) and otherwise takes the first member the value
// coerces to. The schemas still advertise the strict types; coercion only
// rescues values a strict reading would refuse.

// coerceArguments returns raw with every argument that the reference would
// coerce replaced by its coerced value (checkArguments applies coerceValue
// to the arguments it has decoded; this form shows the result as JSON), recursing into objects and arrays
// (send_keys_batch operations); raw is returned unchanged when nothing
// changes or it is not a JSON object (validation reports that).
func coerceArguments(schema map[string]any, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	out, changed := coerceValue(schema, v)
	if !changed {
		return raw
	}
	buf, err := json.Marshal(out)
	if err != nil {
		return raw
	}
	return buf
}

// coerceValue coerces v to schema s; changed reports a rewrite.
func coerceValue(s map[string]any, v any) (any, bool) {
	if s == nil {
		return v, false
	}
	if _, ok := validateValue(s, v); ok {
		return v, false // strictly valid, members included
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				if out, changed := coerceValue(m, v); changed {
					if _, valid := validateValue(m, out); valid {
						return out, true
					}
				}
			}
		}
		return v, false
	}
	if types, ok := s["type"].([]any); ok {
		for _, t := range types {
			alt := map[string]any{}
			for k, x := range s {
				alt[k] = x
			}
			alt["type"] = t
			if out, changed := coerceValue(alt, v); changed {
				if _, valid := validateValue(alt, out); valid {
					return out, true
				}
			}
		}
		return v, false
	}
	if _, isEnum := s["enum"]; isEnum {
		return v, false // literals are strict
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "boolean":
		if b, ok := laxBool(v); ok {
			return b, true
		}
	case "integer":
		if n, ok := laxInt(v); ok {
			return n, true
		}
	case "number":
		if n, ok := laxFloat(v); ok {
			return n, true
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		props, _ := s["properties"].(map[string]any)
		extra, _ := s["additionalProperties"].(map[string]any)
		changed := false
		out := make(map[string]any, len(obj))
		for k, e := range obj {
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				ps = extra
			}
			ne, c := coerceValue(ps, e)
			out[k] = ne
			changed = changed || c
		}
		return out, changed
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return v, false
		}
		items, _ := s["items"].(map[string]any)
		changed := false
		out := make([]any, len(arr))
		for i, e := range arr {
			ne, c := coerceValue(items, e)
			out[i] = ne
			changed = changed || c
		}
		return out, changed
	}
	return v, false
}

func laxBool(v any) (bool, bool) {
	switch x := v.(type) {
	case string:
		switch strings.ToLower(x) {
		case "1", "on", "t", "true", "y", "yes":
			return true, true
		case "0", "off", "f", "false", "n", "no":
			return false, true
		}
	case json.Number:
		f, err := x.Float64()
		if err == nil && (f == 0 || f == 1) {
			return f == 1, true
		}
	}
	return false, false
}

func laxInt(v any) (json.Number, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	case json.Number:
		// An integral float (5.0, 1e2) within int64.
		r, ok := new(big.Rat).SetString(string(x))
		if !ok || !r.IsInt() || !r.Num().IsInt64() {
			return "", false
		}
		return json.Number(r.Num().String()), true
	case string:
		s := strings.TrimSpace(x)
		sign := ""
		if s != "" && (s[0] == '+' || s[0] == '-') {
			if s[0] == '-' {
				sign = "-"
			}
			s = s[1:]
		}
		if whole, frac, ok := strings.Cut(s, "."); ok {
			if frac == "" || strings.Trim(frac, "0") != "" {
				return "", false
			}
			s = whole
		}
		digits, ok := pyDigits(s)
		if !ok {
			return "", false
		}
		n, err := strconv.ParseInt(sign+digits, 10, 64)
		if err != nil {
			return "", false
		}
		return json.Number(strconv.FormatInt(n, 10)), true
	}
	return "", false
}

// pyDigits accepts Python's integer literal digits: ASCII digits with single
// underscores between them, and returns them without the underscores.
func pyDigits(s string) (string, bool) {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_':
		default:
			return "", false
		}
	}
	return b.String(), true
}

func laxFloat(v any) (json.Number, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	case string:
		s := strings.TrimSpace(x)
		if strings.Contains(s, "_") {
			// Underscores only between digits, as Python's float() takes them.
			for i := 0; i < len(s); i++ {
				if s[i] == '_' && (i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1])) {
					return "", false
				}
			}
			s = strings.ReplaceAll(s, "_", "")
		}
		// Hexadecimal floats are Go's, not Python's; inf and nan parse in
		// the reference but every tool then refuses them, and JSON cannot
		// carry them: left as strings, validation refuses them here.
		if strings.ContainsAny(strings.ToLower(s), "xpin") {
			return "", false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", false
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
	}
	return "", false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
