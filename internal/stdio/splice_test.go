package stdio

import (
	"bytes"
	"strings"
	"testing"
)

// TestSplice: a response line holding a stand-in is written with the held
// encoding in its place, once; a batch's stand-ins too; lines without one,
// a stand-in of another Framer, and one already written pass as they are.
func TestSplice(t *testing.T) {
	var out bytes.Buffer
	f := New(strings.NewReader(""), &out)
	raw := []byte(`{"content":[{"type":"text","text":"big"}]}`)
	s1 := f.Splice(raw)
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(s1) + "}\n")
	if _, err := f.Write(line); err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":` + string(raw) + "}\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}

	out.Reset()
	a, b := f.Splice([]byte(`{"a":1}`)), f.Splice([]byte(`{"b":2}`))
	batch := `[{"jsonrpc":"2.0","id":2,"result":` + string(a) + `},{"jsonrpc":"2.0","id":3,"result":` + string(b) + "}]\n"
	if _, err := f.Write([]byte(batch)); err != nil {
		t.Fatal(err)
	}
	if want := `[{"jsonrpc":"2.0","id":2,"result":{"a":1}},{"jsonrpc":"2.0","id":3,"result":{"b":2}}]` + "\n"; out.String() != want {
		t.Fatalf("batch: got %q, want %q", out.String(), want)
	}

	other := New(strings.NewReader(""), &bytes.Buffer{})
	foreign := other.Splice([]byte(`{"x":1}`))
	f.Splice([]byte(`{"held":1}`)) // so that Write looks
	for _, plain := range []string{
		`{"jsonrpc":"2.0","id":4,"result":{"content":[]}}` + "\n",
		`{"jsonrpc":"2.0","id":5,"result":` + string(foreign) + "}\n",
		string(line), // its stand-in was used
	} {
		out.Reset()
		if _, err := f.Write([]byte(plain)); err != nil {
			t.Fatal(err)
		}
		if out.String() != plain {
			t.Errorf("got %q, want %q unchanged", out.String(), plain)
		}
	}
}

// TestSpliceBounded: encodings never written are dropped past maxSpliced.
func TestSpliceBounded(t *testing.T) {
	f := New(strings.NewReader(""), &bytes.Buffer{})
	for range maxSpliced + 10 {
		f.Splice([]byte(`{}`))
	}
	if n := len(f.spliced); n != maxSpliced {
		t.Errorf("%d held, want %d", n, maxSpliced)
	}
}
