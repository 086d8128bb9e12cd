package oauth

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func newURLVerifier(t *testing.T, c *clock, url string) *Verifier {
	t.Helper()
	v, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: url, now: c.now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

// TestJWKSRotationFromURL: the issuer rotates to a new key; a token with
// the new kid makes the verifier fetch the set again (once the refetch
// interval since the last load has passed) and then verifies.
func TestJWKSRotationFromURL(t *testing.T) {
	c := newClock()
	old, fresh := sharedKeys()["ES256"], genKey("ES256", "ec-2")
	srv := newJWKSServer(t, jwks(old.jwk(nil)))
	v := newURLVerifier(t, c, srv.URL)
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("New fetched %d times, want 1", n)
	}
	if _, err := v.Verify(t.Context(), old.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("old key before rotation: %v", err)
	}

	srv.set(http.StatusOK, jwks(old.jwk(nil), fresh.jwk(nil)))
	c.advance(refetchInterval)
	tok := fresh.token(nil, claimsAt(c.now()))
	// The request that triggers the fetch has already gone (its client hung
	// up); the fetch must still complete, or it would waste the interval.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := v.Verify(gone, tok); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2", n)
	}
	// Known keys need no fetch.
	for range 5 {
		if _, err := v.Verify(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(t.Context(), old.token(nil, claimsAt(c.now()))); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after known-kid tokens, want 2", n)
	}
}

// TestJWKSRefetchRateLimit: a flood of tokens with unknown kids costs at
// most one fetch per refetchInterval, and a rotation inside the interval
// is picked up only after it.
func TestJWKSRefetchRateLimit(t *testing.T) {
	c := newClock()
	k, fresh := sharedKeys()["RS256"], genKey("RS256", "rsa-new")
	srv := newJWKSServer(t, jwks(k.jwk(nil)))
	v := newURLVerifier(t, c, srv.URL)
	srv.set(http.StatusOK, jwks(k.jwk(nil), fresh.jwk(nil)))

	flood := func() {
		for i := range 50 {
			tok := k.token(map[string]any{"kid": "bogus-" + string(rune('a'+i%26))}, claimsAt(c.now()))
			if _, err := v.Verify(t.Context(), tok); err == nil {
				t.Fatal("bogus kid accepted")
			}
		}
	}
	// Within the interval after New's load: no fetch at all, so even the
	// real new key is not found yet.
	c.advance(refetchInterval - time.Second)
	flood()
	if _, err := v.Verify(t.Context(), fresh.token(nil, claimsAt(c.now()))); err == nil {
		t.Fatal("new key found without a fetch")
	}
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("fetches = %d inside the first interval, want 1 (New's)", n)
	}
	// After the interval: the flood costs exactly one fetch...
	c.advance(time.Second)
	flood()
	if n := srv.hits.Load(); n != 2 {
		t.Fatalf("fetches = %d after one flood, want 2", n)
	}
	// ...which brought the rotated key along.
	if _, err := v.Verify(t.Context(), fresh.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("rotated key after the interval's fetch: %v", err)
	}
	c.advance(refetchInterval)
	flood()
	flood()
	if n := srv.hits.Load(); n != 3 {
		t.Fatalf("fetches = %d after the next interval, want 3", n)
	}
}

// TestJWKSWithdrawnKeyExpires: a key the issuer withdraws stops working once
// the loaded set is older than maxKeyAge, without any unknown kid.
func TestJWKSWithdrawnKeyExpires(t *testing.T) {
	c := newClock()
	gone, stays := sharedKeys()["EdDSA"], sharedKeys()["ES256"]
	srv := newJWKSServer(t, jwks(gone.jwk(nil), stays.jwk(nil)))
	v := newURLVerifier(t, c, srv.URL)
	srv.set(http.StatusOK, jwks(stays.jwk(nil)))

	c.advance(maxKeyAge - time.Second)
	if _, err := v.Verify(t.Context(), gone.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("before maxKeyAge the cached key still verifies: %v", err)
	}
	c.advance(time.Second)
	if _, err := v.Verify(t.Context(), gone.token(nil, claimsAt(c.now()))); err == nil {
		t.Fatal("withdrawn key still accepted after maxKeyAge")
	}
	if _, err := v.Verify(t.Context(), stays.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("remaining key: %v", err)
	}
}

// TestJWKSFailedReloadKeepsKeys: an issuer outage does not lock out tokens
// signed by keys already loaded, and the outage is named in the error of a
// token that needed the reload.
func TestJWKSFailedReloadKeepsKeys(t *testing.T) {
	c := newClock()
	k := sharedKeys()["ES256"]
	srv := newJWKSServer(t, jwks(k.jwk(nil)))
	v := newURLVerifier(t, c, srv.URL)
	srv.set(http.StatusInternalServerError, []byte("down"))
	c.advance(maxKeyAge)
	if _, err := v.Verify(t.Context(), k.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("known key during outage: %v", err)
	}
	c.advance(refetchInterval)
	_, err := v.Verify(t.Context(), k.token(map[string]any{"kid": "new"}, claimsAt(c.now())))
	if err == nil || !strings.Contains(err.Error(), "500") || !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("unknown kid during outage: err = %v, want invalid token naming the 500", err)
	}
	if n := srv.hits.Load(); n != 3 {
		t.Errorf("fetches = %d, want 3", n)
	}
}

// TestJWKSRotationFromFile: a file source is re-read on an unknown kid too.
func TestJWKSRotationFromFile(t *testing.T) {
	c := newClock()
	old, fresh := sharedKeys()["EdDSA"], genKey("EdDSA", "ed-2")
	p := writeJWKS(t, jwks(old.jwk(nil)))
	v := newVerifier(t, c, Config{JWKS: p})
	if err := os.WriteFile(p, jwks(fresh.jwk(nil)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.advance(refetchInterval)
	if _, err := v.Verify(t.Context(), fresh.token(nil, claimsAt(c.now()))); err != nil {
		t.Fatalf("rotated file key: %v", err)
	}
}

func TestJWKSFetchLimits(t *testing.T) {
	k := sharedKeys()["ES256"]
	t.Run("size cap", func(t *testing.T) {
		// A valid set padded with whitespace past the cap.
		body := append(jwks(k.jwk(nil)), bytes.Repeat([]byte(" "), maxJWKSBytes)...)
		srv := newJWKSServer(t, body)
		_, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: srv.URL})
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err = %v, want size cap", err)
		}
		srv.set(http.StatusOK, body[:maxJWKSBytes])
		if _, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: srv.URL}); err != nil {
			t.Fatalf("set of exactly the cap: %v", err)
		}
	})
	t.Run("size cap on file", func(t *testing.T) {
		p := writeJWKS(t, append(jwks(k.jwk(nil)), bytes.Repeat([]byte(" "), maxJWKSBytes)...))
		_, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: p})
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err = %v, want size cap", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		defer func(d time.Duration) { fetchTimeout = d }(fetchTimeout)
		fetchTimeout = 200 * time.Millisecond
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		start := time.Now()
		_, err := New(context.Background(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: srv.URL})
		if err == nil {
			t.Fatal("New succeeded against a server that never answers")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("New took %v, want about the 200ms timeout", d)
		}
	})
	t.Run("status", func(t *testing.T) {
		srv := newJWKSServer(t, jwks(k.jwk(nil)))
		srv.set(http.StatusNotFound, jwks(k.jwk(nil)))
		_, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: srv.URL})
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("err = %v, want the 404", err)
		}
	})
	t.Run("plain http to a remote host", func(t *testing.T) {
		_, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: "http://issuer.example/jwks"})
		if err == nil || !strings.Contains(err.Error(), "https") {
			t.Fatalf("err = %v, want https required", err)
		}
	})
	t.Run("redirect to plain http remote", func(t *testing.T) {
		srv := httptest.NewServer(http.RedirectHandler("http://issuer.invalid/jwks", http.StatusFound))
		defer srv.Close()
		_, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: srv.URL})
		if err == nil || !strings.Contains(err.Error(), "must be https") {
			t.Fatalf("err = %v, want the redirect refused", err)
		}
	})
}

// TestJWKSetThroughVerify covers what makes a set, or a key in it,
// unusable: a set New refuses, and in a set it takes, which keys verify
// tokens and which do not.
func TestJWKSetThroughVerify(t *testing.T) {
	c := newClock()
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	// A 1024-bit and an 8192-bit modulus (their value does not matter:
	// size is checked first).
	n1024 := rsaK.jwk(map[string]any{"n": b64.EncodeToString(bytes.Repeat([]byte{0xff}, 128))})
	n8192 := rsaK.jwk(map[string]any{"n": b64.EncodeToString(bytes.Repeat([]byte{0xff}, 1024))})
	offCurve := ecK.jwk(nil)
	y, _ := b64.DecodeString(offCurve["y"].(string))
	y[len(y)-1] ^= 1
	offCurve["y"] = b64.EncodeToString(y)
	noKid := map[string]any{"kid": nil}
	tests := []struct {
		name   string
		set    string
		good   []*testKey // keys whose tokens verify
		bad    []*testKey // keys whose tokens are refused (sent without kid)
		errHas string     // New refuses the set with this
	}{
		{"three keys", string(jwks(allKeys()...)), []*testKey{rsaK, ecK, edK}, nil, ""},
		{"oct key skipped", string(jwks(map[string]any{"kty": "oct", "k": "c2VjcmV0", "alg": "HS256"}, rsaK.jwk(nil))), []*testKey{rsaK}, nil, ""},
		{"enc key skipped", string(jwks(rsaK.jwk(map[string]any{"use": "enc"}), ecK.jwk(nil))), []*testKey{ecK}, []*testKey{rsaK}, ""},
		{"key_ops without verify skipped", string(jwks(rsaK.jwk(map[string]any{"key_ops": []string{"encrypt"}}), ecK.jwk(nil))), []*testKey{ecK}, []*testKey{rsaK}, ""},
		{"X25519 skipped", string(jwks(map[string]any{"kty": "OKP", "crv": "X25519", "x": edK.jwk(nil)["x"]}, ecK.jwk(nil))), []*testKey{ecK}, []*testKey{edK}, ""},
		{"unknown kty skipped", string(jwks(map[string]any{"kty": "XYZ"}, ecK.jwk(nil))), []*testKey{ecK}, nil, ""},
		{"RSA key declaring EC alg skipped", string(jwks(rsaK.jwk(map[string]any{"alg": "ES256"}), ecK.jwk(nil))), []*testKey{ecK}, []*testKey{rsaK}, ""},
		{"only unusable keys", string(jwks(map[string]any{"kty": "oct", "k": "c2VjcmV0"})), nil, nil, "no usable"},
		{"empty set", `{"keys":[]}`, nil, nil, "no usable"},
		{"not an object", `[]`, nil, nil, "JSON object"},
		{"keys not an array", `{"keys":{}}`, nil, nil, "JWK Set"},
		{"private key material", string(jwks(ecK.jwk(map[string]any{"d": "AAAA"}))), nil, nil, "private"},
		{"private RSA prime only", string(jwks(rsaK.jwk(map[string]any{"p": "AAAA"}))), nil, nil, "private"},
		{"RSA 1024 bits", string(jwks(n1024)), nil, nil, "modulus"},
		{"RSA 8192 bits", string(jwks(n8192)), nil, nil, "larger than 4096"},
		{"RSA even exponent", string(jwks(rsaK.jwk(map[string]any{"e": "AQAA"}))), nil, nil, "exponent"},
		{"RSA exponent 1", string(jwks(rsaK.jwk(map[string]any{"e": "AQ"}))), nil, nil, "bad e value"},
		{"RSA bad n", string(jwks(rsaK.jwk(map[string]any{"n": "!!"}))), nil, nil, "illegal base64"},
		{"EC off curve", string(jwks(offCurve)), nil, nil, "EC key"},
		{"EC short x", string(jwks(ecK.jwk(map[string]any{"x": "AAAA"}))), nil, nil, "wrong length for x"},
		{"Ed25519 short x", string(jwks(edK.jwk(map[string]any{"x": "AAAA"}))), nil, nil, "Ed25519"},
		{"Ed25519 low-order point", string(jwks(edK.jwk(map[string]any{"x": b64.EncodeToString(make([]byte, 32))}))), nil, nil, "low-order"},
		{"duplicate member", `{"keys":[{"kty":"EC","kty":"RSA"}]}`, nil, nil, "duplicate"},
		{"too many keys", string(jwks(manyKeys(maxKeys+1, ecK)...)), nil, nil, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: writeJWKS(t, []byte(tt.set)), now: c.now,
				Algorithms: []string{"RS256", "ES256", "EdDSA"}})
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.good {
				if _, err := v.Verify(t.Context(), k.token(nil, claimsAt(c.now()))); err != nil {
					t.Errorf("%s token: %v", k.alg, err)
				}
			}
			for _, k := range tt.bad {
				if _, err := v.Verify(t.Context(), k.token(noKid, claimsAt(c.now()))); err == nil {
					t.Errorf("%s token verified by a key that should have been skipped", k.alg)
				}
			}
		})
	}
	// A set of exactly maxKeys is taken, and its last key is used.
	v := newVerifier(t, c, Config{}, manyKeys(maxKeys, ecK)...)
	last := manyKeys(maxKeys, ecK)[maxKeys-1]["kid"]
	if _, err := v.Verify(t.Context(), ecK.token(map[string]any{"kid": last}, claimsAt(c.now()))); err != nil {
		t.Errorf("set of exactly maxKeys, last key: %v", err)
	}
}

func manyKeys(n int, k *testKey) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = k.jwk(map[string]any{"kid": string(rune('A'+i%26)) + string(rune('a'+i/26))})
	}
	return out
}
