package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// referenceDecode is what decodeObject replaces: a json.Decoder with
// UseNumber (checkArguments) or json.Unmarshal into an any (the audit).
func referenceDecode(raw []byte, numbers bool) (any, error) {
	var v any
	if !numbers {
		err := json.Unmarshal(raw, &v)
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

var decodeCases = []string{
	`{"":1e700,"":0}`, `{"a":[1,{"b":-2E+400}],"a":0}`, `{"a":"1e700","a":1}`, `{"a":1e308,"a":2}`,
	`{}`, `null`, `[1,"a"]`, `"top"`, `12.50`, ` {"a":1} `,
	`{"content":"plain"}`,
	`{"content":"line\nnext\ttab \"q\" back\\slash \/ \b\f\r"}`,
	`{"u":"\u00e9\u4e2d\ud83d\ude00"}`,                          // BMP and a surrogate pair
	`{"lone":"\ud83d x", "low":"\ude00", "hi2":"\ud83d\ud83d"}`, // lone surrogates: U+FFFD
	"{\"bad\":\"\xff\xfe ok \xed\xa0\x80\"}",                    // invalid UTF-8 in the input
	`{"n":1, "f":1.50, "big":12345678901234567890, "neg":-0, "e":1e400}`,
	`{"nested":{"s":"x\ny","n":2,"a":[1,"b",null,true]}, "b":false, "z":null}`,
	`{"dup":"first","dup":"second"}`,
	`{"a":"\u0000nul"}`,
}

// TestDecodeObject: decodeObject gives exactly what the decoders it
// replaces give, numbers as json.Number or float64, strings with escapes,
// surrogates and invalid UTF-8 as encoding/json decodes them.
func TestDecodeObject(t *testing.T) {
	for _, raw := range decodeCases {
		for _, numbers := range []bool{true, false} {
			want, werr := referenceDecode([]byte(raw), numbers)
			got, gerr := decodeObject([]byte(raw), numbers)
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%q (numbers %v): got %#v, %v; want %#v, %v", raw, numbers, got, gerr, want, werr)
			}
		}
	}
}

// FuzzDecodeObject compares decodeObject with encoding/json on any valid
// JSON, and unquote with it on any string.
func FuzzDecodeObject(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			for _, numbers := range []bool{true, false} {
				want, werr := referenceDecode(raw, numbers)
				got, gerr := decodeObject(raw, numbers)
				if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%q (numbers %v): got %#v, %v; want %#v, %v", raw, numbers, got, gerr, want, werr)
				}
			}
		}
		q, _ := json.Marshal(string(raw))
		var want string
		if err := json.Unmarshal(q, &want); err != nil {
			t.Fatal(err)
		}
		if got := unquote(q); got != want {
			t.Fatalf("unquote(%s) = %q, want %q", q, got, want)
		}
	})
}

// TestDecodeIntoMatchesJSON: decodeInto, which assigns string and boolean
// members without a JSON round trip, fills an argument struct exactly as the
// round trip does, embedded structs, pointers and non-string members
// included, and shares the large string instead of copying it.
func TestDecodeIntoMatchesJSON(t *testing.T) {
	type embedded struct {
		Socket *string `json:"socket_name"`
		Path   string  `json:"socket_path"`
	}
	type args struct {
		Content string   `json:"content"`
		Name    *string  `json:"logical_name"`
		Count   int      `json:"count"`
		Flag    *bool    `json:"flag"`
		On      bool     `json:"on"`
		Keys    []string `json:"keys"`
		Quoted  string   `json:"quoted,string"`
		embedded
	}
	big := strings.Repeat("x\n", 1<<16)
	for _, m := range []map[string]any{
		{"content": big, "logical_name": "n", "count": json.Number("3"), "flag": true, "keys": []any{"a", "b"}, "socket_name": "s", "socket_path": "/p", "quoted": `"q"`},
		{"content": "", "logical_name": nil},
		{"on": true, "flag": false, "count": nil, "keys": nil},
		{"on": nil, "flag": nil, "socket_path": nil},
		{"on": "yes"},
		{"flag": "yes"},
		{"content": true},
		{"logical_name": false},
		{},
	} {
		var want, got args
		buf, _ := json.Marshal(m)
		werr := json.Unmarshal(buf, &want)
		gerr := decodeInto(&got, m, stringFields(reflect.TypeFor[args]()))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: got %+v, %v; want %+v, %v", m, got, gerr, want, werr)
		}
		if s, _ := m["content"].(string); s != "" && unsafe.StringData(got.Content) != unsafe.StringData(s) {
			t.Errorf("the content was copied")
		}
	}
	fields := stringFields(reflect.TypeFor[args]())
	for _, name := range []string{"content", "logical_name", "socket_name", "socket_path", "flag", "on"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s is not assigned directly", name)
		}
	}
	for _, name := range []string{"count", "keys", "quoted"} {
		if _, ok := fields[name]; ok {
			t.Errorf("%s is assigned directly", name)
		}
	}
}
