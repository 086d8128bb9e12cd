package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	secret := "hunter2"
	in := map[string]any{
		"keys":        secret,
		"text":        []any{secret, secret},
		"command":     12345.0,
		"value":       map[string]any{"nested": secret},
		"content":     true,
		"shell":       secret,
		"environment": map[string]any{"API_TOKEN": secret, "N": 1.0},
		"pane_id":     "%1",
		"title":       strings.Repeat("t", 300),
		"operations": []any{
			map[string]any{"keys": secret, "pane_id": "%2"},
			map[string]any{"tool": "send_keys", "arguments": map[string]any{"keys": secret, "environment": `{"A":"` + secret + `"}`}},
		},
		"missing": nil,
	}
	out := Redact(in)
	b, _ := json.Marshal(out)
	s := string(b)
	if strings.Contains(s, secret) || strings.Contains(s, "12345") {
		t.Fatalf("secret leaked: %s", s)
	}
	if out["pane_id"] != "%1" {
		t.Errorf("pane_id not kept")
	}
	env := out["environment"].(map[string]any)
	if _, ok := env["API_TOKEN"]; !ok {
		t.Errorf("environment keys must be kept: %v", env)
	}
	if d := out["keys"].(Digest); d.Len != 7 || d.SHA256Prefix != "f52fbd32b2b3" {
		t.Errorf("digest %+v", d)
	}
	if title := out["title"].(string); !strings.HasSuffix(title, "...<truncated>") || len(title) != 200+len("...<truncated>") {
		t.Errorf("long string: %d", len(title))
	}
	op := out["operations"].([]any)[1].(map[string]any)["arguments"].(map[string]any)
	if _, ok := op["keys"].(Digest); !ok {
		t.Errorf("nested batch keys not digested: %v", op)
	}
}

func TestOpenAppendsWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	for i := 0; i < 2; i++ {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		l.Log(Record{Tool: "list_panes", Outcome: "ok", Args: map[string]any{}})
		_ = l.Close()
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if bytes.Count(b, []byte("\n")) != 2 {
		t.Errorf("want 2 appended lines: %s", b)
	}
}

// TestRedactSecret: a call marked secret keeps no trace of its input, not
// even the digest other sensitive values get; without the mark, the digest
// is there (so the test would fail if secret were ignored).
func TestRedactSecret(t *testing.T) {
	pass := "correct horse battery staple"
	digest := DigestOf(pass).SHA256Prefix
	for _, tc := range []struct {
		name   string
		args   map[string]any
		traced bool
	}{
		{"secret", map[string]any{"keys": pass, "secret": true, "pane_id": "%1"}, false},
		{"secret in a batch row", map[string]any{"operations": []any{map[string]any{"tool": "send_and_wait", "arguments": map[string]any{"keys": pass, "secret": true}}}}, false},
		{"secret false", map[string]any{"keys": pass, "secret": false}, true},
		{"no secret", map[string]any{"keys": pass}, true},
		{"secret not a bool", map[string]any{"keys": pass, "secret": "yes"}, true},
	} {
		b, _ := json.Marshal(Redact(tc.args))
		s := string(b)
		if strings.Contains(s, pass) {
			t.Errorf("%s: the input leaked: %s", tc.name, s)
		}
		if got := strings.Contains(s, digest); got != tc.traced {
			t.Errorf("%s: digest present %v, want %v: %s", tc.name, got, tc.traced, s)
		}
		if !tc.traced && !strings.Contains(s, SecretMark) {
			t.Errorf("%s: no secret mark: %s", tc.name, s)
		}
	}
}
