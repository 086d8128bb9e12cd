package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// EOF reaches the SDK only when every request read has been answered, or
// was cancelled, or maxWait passed.
func TestDrainingStdio(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		answers []string
		wantMin time.Duration
	}{
		{"answered", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n", []string{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"}, 0},
		{"cancelled", `{"jsonrpc":"2.0","id":"a","method":"tools/call"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}` + "\n", nil, 0},
		{"unanswered waits for maxWait", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}` + "\n", nil, 200 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			d := newDrainingStdio(strings.NewReader(c.in), &out, 200*time.Millisecond)
			go func() {
				time.Sleep(20 * time.Millisecond)
				for _, a := range c.answers {
					// Written in two pieces: responses are counted per line.
					_, _ = d.Write([]byte(a[:5]))
					_, _ = d.Write([]byte(a[5:]))
				}
			}()
			start := time.Now()
			got, err := io.ReadAll(d)
			el := time.Since(start)
			if err != nil || string(got) != c.in {
				t.Fatalf("read %q, %v", got, err)
			}
			if el < c.wantMin || (c.wantMin == 0 && el > 150*time.Millisecond) {
				t.Errorf("EOF after %v", el)
			}
		})
	}
}
