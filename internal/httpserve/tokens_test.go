package httpserve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

func TestParseTokens(t *testing.T) {
	const tokA, tokB = "aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb"
	tests := []struct {
		name    string
		file    string
		tier    config.Tier
		want    map[string]Identity // token -> identity
		wantErr string
	}{
		{"name and tier", tokA + " alice readonly\n", config.Mutating, map[string]Identity{tokA: {Name: "alice", Tier: config.Readonly}}, ""},
		{"defaults: line name, server tier", "# c\n\n" + tokA + "\n", config.Mutating, map[string]Identity{tokA: {Name: "line-3", Tier: config.Mutating}}, ""},
		{"comments and tabs", tokA + "\talice # note\n  " + tokB + "  bob  mutating\n", config.Destructive,
			map[string]Identity{tokA: {Name: "alice", Tier: config.Destructive}, tokB: {Name: "bob", Tier: config.Mutating}}, ""},
		{"tier above the server's", tokA + " alice destructive\n", config.Mutating, nil, "line 1: tier destructive is above the server's tier mutating"},
		{"unknown tier", tokA + " alice admin\n", config.Mutating, nil, "line 1: tier must be"},
		{"short token", "short alice\n", config.Mutating, nil, "line 1: the token is shorter"},
		{"scope", tokA + " alice readonly own\n" + tokB + " bob mutating sessions=ci-*,notes\n", config.Mutating,
			map[string]Identity{tokA: {Name: "alice", Tier: config.Readonly, Scope: "own"}, tokB: {Name: "bob", Tier: config.Mutating, Scope: "sessions=notes,ci-*"}}, ""},
		{"explicit no scope", tokA + " alice readonly none\n", config.Mutating, map[string]Identity{tokA: {Name: "alice", Tier: config.Readonly, Scope: "none"}}, ""},
		{"bad scope", tokA + " alice readonly everything\n", config.Mutating, nil, "line 1: a scope is own"},
		{"too many fields", tokA + " alice readonly own extra\n", config.Mutating, nil, "line 1: expected TOKEN [NAME [TIER [SCOPE]]]"},
		{"same token twice", tokA + " a\n" + tokA + " b\n", config.Mutating, nil, "line 2: the same token as line 1"},
		{"same name twice", tokA + " a\n" + tokB + " a\n", config.Mutating, nil, `line 2: the name "a" is already used on line 1`},
		{"empty", "# nothing\n", config.Mutating, nil, "no token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ParseTokens(strings.NewReader(tc.file), tc.tier)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), tokA) {
					t.Errorf("the error repeats a token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Len() != len(tc.want) {
				t.Fatalf("%d tokens, want %d", st.Len(), len(tc.want))
			}
			for tok, want := range tc.want {
				got, err := st.Check(context.Background(), tok)
				if err != nil || got != want {
					t.Errorf("Check(%s) = %+v, %v; want %+v", tok[:4], got, err, want)
				}
			}
			for _, bad := range []string{"", tokA[:19], tokA + "a", strings.ToUpper(tokA)} {
				if _, err := st.Check(context.Background(), bad); !errors.Is(err, ErrUnknownToken) {
					t.Errorf("Check(%q) accepted", bad)
				}
			}
		})
	}
}

func TestLoadTokensFilePermissions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o600, true}, {0o400, true}, {0o640, false}, {0o604, false}, {0o644, false}} {
		path := filepath.Join(dir, tc.mode.String())
		if err := os.WriteFile(path, []byte("aaaaaaaaaaaaaaaaaaaa alice\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTokensFile(path, config.Mutating)
		if (err == nil) != tc.ok {
			t.Errorf("mode %v: err %v, want ok=%v", tc.mode, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrFileExposed) || !strings.Contains(err.Error(), "chmod 600")) {
			t.Errorf("mode %v: unclear error %v", tc.mode, err)
		}
	}
}

func TestEnsureTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "tmux-mcp", "http-token")
	tok, created, err := EnsureTokenFile(path)
	if err != nil || !created || len(tok) < 40 {
		t.Fatalf("first start: %v %v len %d", err, created, len(tok))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fi.Mode(), err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", di.Mode())
	}
	again, created, err := EnsureTokenFile(path)
	if err != nil || created || again != tok {
		t.Fatalf("second start: %v %v same=%v", err, created, again == tok)
	}
	other, _, _ := EnsureTokenFile(filepath.Join(t.TempDir(), "t"))
	if other == tok {
		t.Errorf("two generated tokens are equal")
	}
	_ = os.Chmod(path, 0o644)
	if _, _, err := EnsureTokenFile(path); !errors.Is(err, ErrFileExposed) {
		t.Errorf("a world-readable token file: %v", err)
	}
}

func TestCheckBind(t *testing.T) {
	tests := []struct {
		addr            string
		tls, insecure   bool
		wantErr, warned bool
	}{
		{"127.0.0.1:8765", false, false, false, false},
		{"localhost:8765", false, false, false, false},
		{"[::1]:8765", false, false, false, false},
		{"0.0.0.0:8765", false, false, true, false},
		{":8765", false, false, true, false},
		{"192.0.2.1:8765", false, false, true, false},
		{"0.0.0.0:8765", true, false, false, false},
		{"0.0.0.0:8765", false, true, false, true},
		{"no-port", false, false, true, false},
	}
	for _, tc := range tests {
		warn, err := CheckBind(tc.addr, tc.tls, tc.insecure)
		if (err != nil) != tc.wantErr || (warn != "") != tc.warned {
			t.Errorf("CheckBind(%q, tls=%v, insecure=%v) = %q, %v", tc.addr, tc.tls, tc.insecure, warn, err)
		}
	}
}

// TestTokensFileReload: Reload swaps in the file's new tokens and names the
// ones removed, replaced or given another tier or scope; a file that fails the
// checks leaves the tokens in use alone.
func TestTokensFileReload(t *testing.T) {
	const alice, alice2, bob, carol, dave = "alice-token-aaaaaaaaaa", "alice-token-rotated-aa", "bob-token-bbbbbbbbbbbb", "carol-token-cccccccccc", "dave-token-dddddddddddd"
	const erin = "erin-token-eeeeeeeeeeee"
	p := filepath.Join(t.TempDir(), "tokens")
	write := func(body string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(alice+" alice\n"+bob+" bob\n"+carol+" carol\n"+dave+" dave mutating\n"+erin+" erin mutating own\n", 0o600)
	tf, err := OpenTokensFile(p, config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	accepts := func(token, name string) bool {
		id, err := tf.Check(context.Background(), token)
		return err == nil && id.Name == name
	}
	// alice rotated, bob removed, carol kept, dave down to read-only,
	// erin given other sessions.
	write(alice2+" alice\n"+carol+" carol\n"+dave+" dave readonly\n"+erin+" erin mutating sessions=ci-*\n", 0o600)
	changed, err := tf.Reload()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if !slices.Equal(changed, []string{"alice", "bob", "dave", "erin"}) {
		t.Errorf("changed = %v, want [alice bob dave erin]", changed)
	}
	for _, c := range []struct {
		token, name string
		ok          bool
	}{{alice, "alice", false}, {alice2, "alice", true}, {bob, "bob", false}, {carol, "carol", true}, {dave, "dave", true}} {
		if got := accepts(c.token, c.name); got != c.ok {
			t.Errorf("after the reload, %s's token %.10s… accepted = %v, want %v", c.name, c.token, got, c.ok)
		}
	}
	if id, _ := tf.Check(context.Background(), dave); id.Tier != config.Readonly {
		t.Errorf("dave's tier after the reload: %v, want readonly", id.Tier)
	}
	if id, _ := tf.Check(context.Background(), erin); id.Scope != "sessions=ci-*" {
		t.Errorf("erin's scope after the reload: %q, want sessions=ci-*", id.Scope)
	}
	// A file others can read, and one with a bad line, are not loaded.
	for _, bad := range []struct {
		body string
		mode os.FileMode
		want string
	}{
		{bob + " bob\n", 0o644, "readable by other users"},
		{bob + " bob admin\n", 0o600, "tier must be"},
	} {
		write(bad.body, bad.mode)
		if changed, err := tf.Reload(); err == nil || !strings.Contains(err.Error(), bad.want) || changed != nil {
			t.Errorf("reloading a bad file: %v, %v; want an error saying %q", changed, err, bad.want)
		}
		if !accepts(alice2, "alice") || accepts(bob, "bob") {
			t.Errorf("a bad file changed the tokens in use")
		}
	}
}

// TestGeneratedTokenReload: the generated token is reloadable like a
// tokens file: an edited file replaces it, a deleted one is made anew (how
// a user rotates it), and a file others can read is not loaded.
func TestGeneratedTokenReload(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cfg", "tmux-mcp", "http-token")
	tf, created, err := OpenGeneratedToken(p, config.Mutating)
	if err != nil || !created {
		t.Fatalf("first start: created=%v, %v", created, err)
	}
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	accepts := func(token string) bool {
		id, err := tf.Check(context.Background(), token)
		return err == nil && id.Name == GeneratedTokenName && id.Tier == config.Mutating
	}
	first := read()
	if !accepts(first) {
		t.Fatal("the generated token is refused")
	}
	if _, again, err := OpenGeneratedToken(p, config.Mutating); err != nil || again {
		t.Fatalf("second start: created=%v, %v; want the same file used", again, err)
	}

	// Nothing changed: nothing to revoke.
	if changed, err := tf.Reload(); err != nil || len(changed) != 0 {
		t.Errorf("reload of the same file: %v, %v", changed, err)
	}
	// Edited by hand.
	const edited = "tmcp_edited_by_hand_0123456789"
	if err := os.WriteFile(p, []byte(edited+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := tf.Reload(); err != nil || !slices.Equal(changed, []string{GeneratedTokenName}) {
		t.Errorf("reload of an edited file: %v, %v", changed, err)
	}
	if accepts(first) || !accepts(edited) {
		t.Errorf("after the edit: old accepted=%v, new accepted=%v", accepts(first), accepts(edited))
	}
	// Deleted: a new one is made, and the old one no longer works.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if changed, err := tf.Reload(); err != nil || !slices.Equal(changed, []string{GeneratedTokenName}) {
		t.Errorf("reload after deleting the file: %v, %v", changed, err)
	}
	rotated := read()
	if rotated == edited || accepts(edited) || !accepts(rotated) {
		t.Errorf("after deleting the file: new token %q accepted=%v, old accepted=%v", rotated, accepts(rotated), accepts(edited))
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new file: %v, %v; want mode 0600", fi, err)
	}
	// Readable by others: refused, the token in use stays.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := tf.Reload(); err == nil || !strings.Contains(err.Error(), "readable by other users") || changed != nil {
		t.Errorf("reload of an exposed file: %v, %v", changed, err)
	}
	if !accepts(rotated) {
		t.Error("an exposed file changed the token in use")
	}
}
