package server

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Typed option values, as the reference returns them. libtmux (0.62,
// options.py) converts what tmux prints before the reference hands it on:
//
//   - a single value (a scalar option, or one element asked for by index,
//     "status-format[0]") goes through convert_value: all digits becomes an
//     integer, "on" true, "off" false, anything else stays a string;
//   - an array option asked for by its base name becomes an object keyed by
//     the element index ("0", "3": tmux arrays are sparse) whose values stay
//     strings (convert_values does not descend into the array);
//   - three arrays are exploded further (explode_complex): command-alias
//     into {alias: command}, terminal-features into {terminal: [feature]},
//     terminal-overrides into {terminal: {capability: value or null}} with
//     an all-digit value as an integer; an element that does not split is
//     skipped, as libtmux skips it.
//
// One deliberate departure: Python's str.isdigit also accepts non-ASCII
// digits (and int() then fails on some of them); only ASCII digits count
// here, so a value like "²" stays a string instead of failing the call.

// optionScalar is libtmux's convert_value.
func optionScalar(v string) any {
	if n, ok := digitsNumber(v); ok {
		return n
	}
	switch v {
	case "on":
		return true
	case "off":
		return false
	}
	return v
}

// digitsNumber is v as a JSON integer when v is all ASCII digits (leading
// zeros dropped, as int("042") drops them; any length, as Python's int).
func digitsNumber(v string) (json.Number, bool) {
	if v == "" {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return "", false
		}
	}
	if t := strings.TrimLeft(v, "0"); t != "" {
		return json.Number(t), true
	}
	return json.Number("0"), true
}

// orderedObject is a JSON object that keeps tmux's element order (libtmux
// builds Python dicts, which keep insertion order), where a Go map would sort
// its keys.
type orderedObject []orderedField

type orderedField struct {
	Key   string
	Value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// set replaces the value of key, or appends it.
func (o *orderedObject) set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, orderedField{key, v})
}

// optionArray is the typed value of an array option asked for by its base
// name: keys are tmux's "name[N]" and elems the element values, one to one.
func optionArray(base string, keys, elems []string) any {
	out := orderedObject{}
	switch base {
	case "command-alias":
		for _, e := range elems {
			if alias, cmd, ok := strings.Cut(e, "="); ok {
				out.set(alias, cmd)
			}
		}
	case "terminal-features":
		for _, e := range elems {
			if term, features, ok := strings.Cut(e, ":"); ok {
				out.set(term, strings.Split(features, ":"))
			}
		}
	case "terminal-overrides":
		caps := map[string]*orderedObject{}
		for _, e := range elems {
			parts := strings.Split(e, ":")
			term := parts[0]
			if caps[term] == nil {
				caps[term] = &orderedObject{}
				out.set(term, caps[term])
			}
			for _, f := range parts[1:] {
				if k, v, ok := strings.Cut(f, "="); ok {
					var val any = v
					if n, isNum := digitsNumber(v); isNum {
						val = n
					}
					caps[term].set(k, val)
				} else if f != "" {
					caps[term].set(f, nil)
				}
			}
		}
	default:
		for i, k := range keys {
			open := strings.LastIndexByte(k, '[')
			if open < 0 || !strings.HasSuffix(k, "]") {
				continue
			}
			out.set(k[open+1:len(k)-1], elems[i])
		}
	}
	return out
}
