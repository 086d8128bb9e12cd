package stdio

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// The SDK encodes a result several times over on its way out: the result
// is marshalled into a json.RawMessage, which encoding/json then checks and
// compacts again inside the JSON-RPC response, and once more when that is
// written (each a validating scan of every byte, ~1.8 ms per 441 KB; a
// 500-pane list_panes was four such passes). A result whose encoding is
// already made can instead be handed to the Framer: the SDK encodes a small
// stand-in object, and Write puts the encoding in its place, byte for byte
// what the SDK would have written.

// maxSpliced bounds the encodings held for responses not yet written (one
// per response in flight; a response that is never written, its session
// gone, would otherwise hold its encoding for good).
const maxSpliced = 256

// Splice holds raw, the compact encoding of a response's result, and
// returns the stand-in to encode as that result instead: an object whose
// one key holds this Framer's secret nonce, which no other JSON can hold
// (a client never sees it). When the response line is written, Write puts
// raw where the stand-in is.
func (f *Framer) Splice(raw []byte) []byte {
	f.smu.Lock()
	defer f.smu.Unlock()
	if f.marker == nil {
		var b [12]byte
		_, _ = rand.Read(b[:])
		f.marker = []byte(`{"tmux-mcp-splice-` + hex.EncodeToString(b[:]) + `":`)
		f.spliced = map[uint64][]byte{}
	}
	f.nextSplice++
	n := f.nextSplice
	f.spliced[n] = raw
	if len(f.spliced) > maxSpliced {
		delete(f.spliced, n-maxSpliced)
	}
	b := strconv.AppendUint(append([]byte(nil), f.marker...), n, 10)
	return append(b, '}')
}

// unsplice returns line with every stand-in it holds replaced by its
// encoding, and whether it held any.
func (f *Framer) unsplice(line []byte) ([]byte, bool) {
	f.smu.Lock()
	defer f.smu.Unlock()
	if len(f.spliced) == 0 || !bytes.Contains(line, f.marker) {
		return line, false
	}
	var out []byte
	rest := line
	for {
		i := bytes.Index(rest, f.marker)
		if i < 0 {
			break
		}
		num := rest[i+len(f.marker):]
		end := bytes.IndexByte(num, '}')
		if end < 0 {
			break
		}
		n, err := strconv.ParseUint(string(num[:end]), 10, 64)
		raw, ok := f.spliced[n]
		if err != nil || !ok {
			break
		}
		delete(f.spliced, n)
		if out == nil {
			out = make([]byte, 0, len(line)+len(raw))
		}
		out = append(append(out, rest[:i]...), raw...)
		rest = num[end+1:]
	}
	if out == nil {
		return line, false
	}
	return append(out, rest...), true
}
