package oauth

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// allKeys is a JWK Set with one key of each kind.
func allKeys() []map[string]any {
	k := sharedKeys()
	return []map[string]any{k["RS256"].jwk(nil), k["ES256"].jwk(nil), k["EdDSA"].jwk(nil)}
}

func TestVerifyValidPerAlgorithm(t *testing.T) {
	c := newClock()
	ps := genKey("PS256", "ps-1")
	es384 := genKey("ES384", "ec384")
	es512 := genKey("ES512", "ec521")
	ed := genKey("Ed25519", "ed-new")
	keys := append(allKeys(), ps.jwk(nil), es384.jwk(nil), es512.jwk(nil), ed.jwk(nil))
	v := newVerifier(t, c, Config{Algorithms: []string{"RS256", "PS256", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}}, keys...)
	for _, k := range []*testKey{sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"], ps, es384, es512, ed} {
		t.Run(k.alg, func(t *testing.T) {
			got, err := v.Verify(t.Context(), k.token(nil, claimsAt(c.now())))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := Claims{
				Subject: "alice", Issuer: testIssuer, Audience: []string{testAudience},
				Scopes: []string{"tmux:read"}, Tier: config.Readonly,
				Expiry: c.now().Add(10 * time.Minute),
			}
			if !equalClaims(got, want) {
				t.Errorf("claims = %+v, want %+v", got, want)
			}
		})
	}
}

func equalClaims(a, b Claims) bool {
	return a.Subject == b.Subject && a.Issuer == b.Issuer && slices.Equal(a.Audience, b.Audience) &&
		slices.Equal(a.Scopes, b.Scopes) && a.Tier == b.Tier && a.Expiry.Equal(b.Expiry) && a.NotBefore.Equal(b.NotBefore)
}

// TestVerifyClaims covers the time, issuer, audience and subject checks,
// including both edges of the clock skew on exp, nbf and iat.
func TestVerifyClaims(t *testing.T) {
	c := newClock()
	now := c.now()
	skew := DefaultClockSkew
	v := newVerifier(t, c, Config{}, allKeys()...)
	k := sharedKeys()["ES256"]
	sec := time.Second
	tests := []struct {
		name    string
		changes map[string]any
		ok      bool
		errHas  string
	}{
		{"valid", nil, true, ""},
		{"expired long ago", map[string]any{"exp": now.Add(-time.Hour).Unix()}, false, "expired"},
		{"exp just inside skew", map[string]any{"exp": now.Add(-skew + sec).Unix()}, true, ""},
		{"exp at skew edge", map[string]any{"exp": now.Add(-skew).Unix()}, false, "expired"},
		{"exp fractional inside skew", map[string]any{"exp": float64(now.Add(-skew).Unix()) + 0.5}, true, ""},
		{"no exp", map[string]any{"exp": nil}, false, "exp: missing"},
		{"exp as string", map[string]any{"exp": "1800000600"}, false, "exp: missing"},
		{"exp negative", map[string]any{"exp": -5}, false, "exp"},
		{"exp huge", map[string]any{"exp": 1e300}, false, "exp"},
		{"exp past year 9999", map[string]any{"exp": 9e18}, false, "exp: missing"},
		{"iat past int64", map[string]any{"iat": 1e19}, false, "iat:"},
		{"nbf in future", map[string]any{"nbf": now.Add(time.Hour).Unix()}, false, "nbf"},
		{"nbf at skew edge", map[string]any{"nbf": now.Add(skew).Unix()}, true, ""},
		{"nbf just past skew", map[string]any{"nbf": now.Add(skew + sec).Unix()}, false, "nbf"},
		{"nbf past", map[string]any{"nbf": now.Add(-time.Minute).Unix()}, true, ""},
		{"nbf not a number", map[string]any{"nbf": true}, false, "nbf"},
		{"iat at skew edge", map[string]any{"iat": now.Add(skew).Unix()}, true, ""},
		{"iat in future", map[string]any{"iat": now.Add(skew + sec).Unix()}, false, "iat"},
		{"iat not a number", map[string]any{"iat": "x"}, false, "iat"},
		{"wrong iss", map[string]any{"iss": "https://evil.example"}, false, "issuer"},
		{"iss with trailing slash", map[string]any{"iss": testIssuer + "/"}, false, "issuer"},
		{"no iss", map[string]any{"iss": nil}, false, "issuer"},
		{"wrong aud", map[string]any{"aud": "http://127.0.0.1:9999/mcp"}, false, "audience"},
		{"aud prefix only", map[string]any{"aud": "http://127.0.0.1:8765"}, false, "audience"},
		{"aud array containing", map[string]any{"aud": []string{"https://other.example", testAudience}}, true, ""},
		{"aud array without", map[string]any{"aud": []string{"https://other.example"}}, false, "audience"},
		{"aud empty array", map[string]any{"aud": []string{}}, false, "audience"},
		{"aud null", map[string]any{"aud": json.RawMessage("null")}, false, "aud: null"},
		{"no aud", map[string]any{"aud": nil}, false, "audience"},
		{"aud number", map[string]any{"aud": 5}, false, "aud"},
		{"no sub", map[string]any{"sub": nil}, false, "subject"},
		{"empty sub", map[string]any{"sub": ""}, false, "subject"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(t.Context(), k.token(nil, merge(claimsAt(now), tt.changes)))
			if tt.ok {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if got.Subject != "alice" {
					t.Errorf("subject = %q", got.Subject)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify accepted the token: %+v", got)
			}
			if !errors.Is(err, ErrInvalidToken) || !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("error %v does not wrap ErrInvalidToken and auth.ErrInvalidToken", err)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
}

func TestVerifyNotBeforeReported(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	nbf := c.now().Add(-time.Minute)
	got, err := v.Verify(t.Context(), sharedKeys()["RS256"].token(nil, merge(claimsAt(c.now()), map[string]any{"nbf": nbf.Unix()})))
	if err != nil {
		t.Fatal(err)
	}
	if !got.NotBefore.Equal(nbf) {
		t.Errorf("NotBefore = %v, want %v", got.NotBefore, nbf)
	}
}

// TestVerifyConfiguredSkew checks that ClockSkew replaces the default.
func TestVerifyConfiguredSkew(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{ClockSkew: 5 * time.Second}, allKeys()...)
	k := sharedKeys()["EdDSA"]
	for _, tt := range []struct {
		ago time.Duration
		ok  bool
	}{{4 * time.Second, true}, {5 * time.Second, false}, {30 * time.Second, false}} {
		_, err := v.Verify(t.Context(), k.token(nil, merge(claimsAt(c.now()), map[string]any{"exp": c.now().Add(-tt.ago).Unix()})))
		if (err == nil) != tt.ok {
			t.Errorf("expired %v ago with 5s skew: err = %v, want ok=%v", tt.ago, err, tt.ok)
		}
	}
}

// TestVerifyAlgorithmAttacks feeds tokens that try to choose how they are
// checked.
func TestVerifyAlgorithmAttacks(t *testing.T) {
	c := newClock()
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	p384 := genKey("ES384", "ec384")
	v := newVerifier(t, c, Config{}, append(allKeys(), p384.jwk(nil))...)
	claims := claimsAt(c.now())
	signedAs := func(k *testKey, alg, kid string) string {
		input := seg(map[string]any{"alg": alg, "kid": kid}) + "." + seg(claims)
		return input + "." + b64.EncodeToString(k.signature(alg, input))
	}
	// RFC 7518 §3.5 fixes the PSS salt length to the hash size; a verifier
	// with PS256 allowed must refuse other salt lengths.
	psV := newVerifier(t, c, Config{Algorithms: []string{"PS256"}}, rsaK.jwk(nil))
	if _, err := psV.Verify(t.Context(), signedAs(rsaK, "PS256", rsaK.kid)); err != nil {
		t.Fatalf("PS256 with the right salt length: %v", err)
	}
	pssToken := func(salt int) string {
		input := seg(map[string]any{"alg": "PS256", "kid": rsaK.kid}) + "." + seg(claims)
		d := sha256.Sum256([]byte(input))
		sig, err := rsa.SignPSS(rand.Reader, rsaK.priv.(*rsa.PrivateKey), crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: salt})
		if err != nil {
			t.Fatal(err)
		}
		return input + "." + b64.EncodeToString(sig)
	}

	unsigned := func(hdr map[string]any, sig string) string {
		return seg(hdr) + "." + seg(claims) + "." + sig
	}
	hs256 := func(secret []byte, kid string) string {
		input := seg(map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}) + "." + seg(claims)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(input))
		return input + "." + b64.EncodeToString(m.Sum(nil))
	}
	der, err := x509.MarshalPKIXPublicKey(rsaK.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	jwkN, _ := b64.DecodeString(rsaK.jwk(nil)["n"].(string))

	// A token claiming ES256 but signed by the RSA key, naming the RSA kid.
	rsaAsES := func() string {
		input := seg(map[string]any{"alg": "ES256", "kid": rsaK.kid}) + "." + seg(claims)
		return input + "." + b64.EncodeToString(rsaK.signature("RS256", input))
	}()
	// A token claiming RS256 that names the EC key's kid.
	ecAsRS := func() string {
		input := seg(map[string]any{"alg": "RS256", "kid": ecK.kid}) + "." + seg(claims)
		return input + "." + b64.EncodeToString(ecK.signature("ES256", input))
	}()
	// EdDSA header naming the EC key, signed by the Ed25519 key.
	edAsEC := func() string {
		input := seg(map[string]any{"alg": "EdDSA", "kid": ecK.kid}) + "." + seg(claims)
		return input + "." + b64.EncodeToString(edK.signature("EdDSA", input))
	}()

	tests := []struct{ name, token string }{
		{"alg none, empty signature", unsigned(map[string]any{"alg": "none"}, "")},
		{"alg none, some signature", unsigned(map[string]any{"alg": "none"}, "AAAA")},
		{"alg None", unsigned(map[string]any{"alg": "None", "kid": rsaK.kid}, "AAAA")},
		{"HS256 keyed with PEM of RSA public key", hs256(pemKey, rsaK.kid)},
		{"HS256 keyed with DER of RSA public key", hs256(der, rsaK.kid)},
		{"HS256 keyed with JWK n bytes", hs256(jwkN, rsaK.kid)},
		{"HS256 without kid", hs256(pemKey, "")},
		{"ES256 header on RSA key", rsaAsES},
		{"RS256 header on EC key", ecAsRS},
		{"EdDSA header on EC key", edAsEC},
		{"PS256 by the set's RSA key, not allowlisted", signedAs(rsaK, "PS256", rsaK.kid)},
		{"ES384 by a key in the set, not allowlisted", signedAs(p384, "ES384", p384.kid)},
		{"PS256 with salt length 0", pssToken(0)},
		{"PS256 with maximal salt", pssToken(rsa.PSSSaltLengthAuto)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vv := v
			if strings.HasPrefix(tt.name, "PS256 with") {
				vv = psV
			}
			if _, err := vv.Verify(t.Context(), tt.token); err == nil {
				t.Fatal("Verify accepted the token")
			} else if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("error %v does not wrap ErrInvalidToken", err)
			}
		})
	}
}

// TestKeyMatching checks that a JWK's type, curve, own alg and use bind it,
// and how a key is chosen with and without kid.
func TestKeyMatching(t *testing.T) {
	c := newClock()
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	rsa2 := genKey("RS256", "rsa-2")
	p384 := genKey("ES384", ecK.kid) // same kid as the P-256 key
	claims := claimsAt(c.now())
	noKid := map[string]any{"kid": nil}
	tests := []struct {
		name  string
		keys  []map[string]any
		token string
		ok    bool
	}{
		{"kid selects", []map[string]any{rsaK.jwk(nil), rsa2.jwk(nil)}, rsa2.token(nil, claims), true},
		{"kid selects, wrong key signed", []map[string]any{rsaK.jwk(nil), rsa2.jwk(nil)}, rsa2.token(map[string]any{"kid": rsaK.kid}, claims), false},
		{"unknown kid", []map[string]any{rsaK.jwk(nil)}, rsaK.token(map[string]any{"kid": "nope"}, claims), false},
		{"kid on token, key without kid", []map[string]any{rsaK.jwk(map[string]any{"kid": nil})}, rsaK.token(nil, claims), false},
		{"no kid, one key", []map[string]any{rsaK.jwk(nil)}, rsaK.token(noKid, claims), true},
		{"no kid, one key of the alg's type among others", allKeys(), ecK.token(noKid, claims), true},
		{"no kid, two keys of the type", []map[string]any{rsaK.jwk(nil), rsa2.jwk(nil)}, rsaK.token(noKid, claims), false},
		{"duplicate kid", []map[string]any{rsaK.jwk(nil), rsa2.jwk(map[string]any{"kid": rsaK.kid})}, rsaK.token(nil, claims), false},
		{"same kid, other curve only", []map[string]any{p384.jwk(nil), ecK.jwk(nil)}, ecK.token(nil, claims), true},
		{"jwk alg agrees", []map[string]any{rsaK.jwk(map[string]any{"alg": "RS256"})}, rsaK.token(nil, claims), true},
		{"jwk alg disagrees", []map[string]any{rsaK.jwk(map[string]any{"alg": "RS384"})}, rsaK.token(nil, claims), false},
		{"jwk alg EdDSA admits Ed25519 name", []map[string]any{edK.jwk(map[string]any{"alg": "Ed25519"})}, edK.token(nil, claims), true},
		{"jwk use sig", []map[string]any{rsaK.jwk(map[string]any{"use": "sig"})}, rsaK.token(nil, claims), true},
		{"jwk use enc", []map[string]any{rsaK.jwk(map[string]any{"use": "enc"}), ecK.jwk(nil)}, rsaK.token(nil, claims), false},
		{"jwk key_ops verify", []map[string]any{rsaK.jwk(map[string]any{"key_ops": []string{"verify"}})}, rsaK.token(nil, claims), true},
		{"jwk key_ops encrypt", []map[string]any{rsaK.jwk(map[string]any{"key_ops": []string{"encrypt"}}), ecK.jwk(nil)}, rsaK.token(nil, claims), false},
		{"EC key labelled as other curve", []map[string]any{ecK.jwk(map[string]any{"crv": "P-384"}), rsaK.jwk(nil)}, ecK.token(nil, claims), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := jwks(tt.keys...)
			p := writeJWKS(t, set)
			v, err := New(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKS: p, now: c.now})
			if err != nil {
				if tt.ok {
					t.Fatalf("New: %v", err)
				}
				return // a set New refuses cannot accept the token either
			}
			_, err = v.Verify(t.Context(), tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("Verify: err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestVerifyTampered(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		k := sharedKeys()[alg]
		good := k.token(nil, claimsAt(c.now()))
		if _, err := v.Verify(t.Context(), good); err != nil {
			t.Fatalf("%s: untampered token refused: %v", alg, err)
		}
		h, rest, _ := strings.Cut(good, ".")
		p, s, _ := strings.Cut(rest, ".")
		sig, _ := b64.DecodeString(s)
		flipped := append([]byte(nil), sig...)
		flipped[len(flipped)/2] ^= 1
		admin := seg(merge(claimsAt(c.now()), map[string]any{"scope": "tmux:admin"}))
		otherSub := seg(merge(claimsAt(c.now()), map[string]any{"sub": "mallory"}))
		cases := map[string]string{
			"signature with a zero byte inside": h + "." + p + "." + b64.EncodeToString(slices.Insert(slices.Clone(sig), len(sig)/2, 0)),
			"payload scope raised":              h + "." + admin + "." + s,
			"payload subject changed":           h + "." + otherSub + "." + s,
			"signature bit flipped":             h + "." + p + "." + b64.EncodeToString(flipped),
			"signature truncated":               h + "." + p + "." + b64.EncodeToString(sig[:len(sig)-1]),
			"signature extended":                h + "." + p + "." + b64.EncodeToString(append(sig, 0)),
			"signature from other key":          h + "." + p + "." + b64.EncodeToString(genKey(alg, k.kid).signature(alg, h+"."+p)),
			"header changed":                    seg(map[string]any{"alg": alg, "kid": k.kid, "typ": "at+jwt"}) + "." + p + "." + s,
		}
		for name, tok := range cases {
			if _, err := v.Verify(t.Context(), tok); err == nil {
				t.Errorf("%s %s: accepted", alg, name)
			} else if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%s %s: error %v does not wrap ErrInvalidToken", alg, name, err)
			}
		}
	}
}

func TestVerifyMalformed(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	k := sharedKeys()["EdDSA"]
	good := k.token(nil, claimsAt(c.now()))
	h, rest, _ := strings.Cut(good, ".")
	p, s, _ := strings.Cut(rest, ".")
	// signed builds a correctly signed token around an arbitrary payload, so
	// the claims decoder is what must refuse it.
	signed := func(payload string) string {
		input := h + "." + b64.EncodeToString([]byte(payload))
		return input + "." + b64.EncodeToString(k.signature("EdDSA", input))
	}
	// hdr signs p under an arbitrary header, so the header checks, not the
	// signature, are what must refuse it.
	hdr := func(raw string) string {
		input := b64.EncodeToString([]byte(raw)) + "." + p
		return input + "." + b64.EncodeToString(k.signature("EdDSA", input))
	}
	// The signature's last base64url character carries 4 unused bits; set
	// one. A lenient decoder yields the same bytes, so only strict decoding
	// refuses this token.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	nonCanonical := s[:len(s)-1] + string(alphabet[strings.IndexByte(alphabet, s[len(s)-1])|1])
	big := k.token(nil, merge(claimsAt(c.now()), map[string]any{"pad": strings.Repeat("x", maxTokenLen)}))
	tests := map[string]string{
		"empty":                  "",
		"one segment":            "abc",
		"two segments":           h + "." + p,
		"four segments":          good + ".AAAA",
		"empty header":           "." + p + "." + s,
		"empty payload":          h + ".." + s,
		"empty signature":        h + "." + p + ".",
		"padded header":          h + "=." + p + "." + s,
		"std base64 chars":       h + "." + p + "+/." + s,
		"spaces":                 " " + good,
		"header not JSON":        hdr("not json"),
		"header array":           hdr(`["alg"]`),
		"header null":            hdr(`null`),
		"header trailing data":   hdr(`{"alg":"EdDSA","kid":"ed-1"}{}`),
		"header no alg":          hdr(`{"kid":"ed-1"}`),
		"header alg number":      hdr(`{"alg":1,"kid":"ed-1"}`),
		"header kid number":      hdr(`{"alg":"EdDSA","kid":1}`),
		"header crit":            hdr(`{"alg":"EdDSA","kid":"ed-1","crit":["exp"],"exp":1}`),
		"payload not JSON":       signed("not json"),
		"payload array":          signed(`[1]`),
		"payload iss number":     signed(`{"iss":1,"sub":"a","aud":"` + testAudience + `","exp":1800000600,"scope":"tmux:read"}`),
		"payload scope array":    signed(`{"iss":"` + testIssuer + `","sub":"a","aud":"` + testAudience + `","exp":1800000600,"scope":["tmux:read"]}`),
		"payload scp number":     signed(`{"iss":"` + testIssuer + `","sub":"a","aud":"` + testAudience + `","exp":1800000600,"scp":7}`),
		"over 16 KiB":            big,
		"non-canonical b64 tail": h + "." + p + "." + nonCanonical,
	}
	// Sanity: the signed() helper makes acceptable tokens from good claims.
	if _, err := v.Verify(t.Context(), signed(`{"iss":"`+testIssuer+`","sub":"a","aud":"`+testAudience+`","exp":1800000600,"scope":"tmux:read"}`)); err != nil {
		t.Fatalf("well-formed hand-made token refused: %v", err)
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := v.Verify(t.Context(), tok); err == nil {
				t.Fatal("accepted")
			} else if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("error %v does not wrap ErrInvalidToken", err)
			}
		})
	}
}

func TestScopeTiers(t *testing.T) {
	c := newClock()
	k := sharedKeys()["RS256"]
	def := newVerifier(t, c, Config{}, allKeys()...)
	custom := newVerifier(t, c, Config{ScopeTiers: map[string]config.Tier{
		"mcp:observe": config.Readonly, "mcp:drive": config.Mutating,
	}}, allKeys()...)
	tests := []struct {
		name       string
		v          *Verifier
		scope, scp any
		tier       config.Tier
		scopes     []string
	}{
		{"read", def, "tmux:read", nil, config.Readonly, []string{"tmux:read"}},
		{"write", def, "tmux:write", nil, config.Mutating, []string{"tmux:write"}},
		{"admin", def, "tmux:admin", nil, config.Destructive, []string{"tmux:admin"}},
		{"highest of several", def, "tmux:read tmux:admin tmux:write", nil, config.Destructive, []string{"tmux:read", "tmux:admin", "tmux:write"}},
		{"unknown scopes kept, known one counts", def, "openid tmux:write profile", nil, config.Mutating, []string{"openid", "tmux:write", "profile"}},
		{"extra whitespace", def, "  tmux:read\ttmux:write ", nil, config.Mutating, []string{"tmux:read", "tmux:write"}},
		{"scp array", def, nil, []string{"tmux:write"}, config.Mutating, []string{"tmux:write"}},
		{"scp string", def, nil, "tmux:admin openid", config.Destructive, []string{"tmux:admin", "openid"}},
		{"scope and scp union", def, "tmux:read", []string{"tmux:admin", "tmux:read"}, config.Destructive, []string{"tmux:read", "tmux:admin"}},
		{"custom mapping", custom, "mcp:drive", nil, config.Mutating, []string{"mcp:drive"}},
		{"custom mapping ignores defaults", custom, "tmux:admin mcp:observe", nil, config.Readonly, []string{"tmux:admin", "mcp:observe"}},
		{"no known scope", def, "openid profile", nil, 0, nil},
		{"no scope at all", def, nil, nil, 0, nil},
		{"empty scope", def, "", []string{}, 0, nil},
		{"case matters", def, "TMUX:ADMIN", nil, 0, nil},
		{"default scope unknown to custom", custom, "tmux:read", nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := merge(claimsAt(c.now()), map[string]any{"scope": tt.scope, "scp": tt.scp})
			got, err := tt.v.Verify(t.Context(), k.token(nil, claims))
			if tt.tier == 0 {
				if err == nil {
					t.Fatalf("accepted with tier %v", got.Tier)
				}
				if !errors.Is(err, ErrInsufficientScope) || !errors.Is(err, ErrInvalidToken) {
					t.Errorf("error %v does not wrap ErrInsufficientScope and ErrInvalidToken", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got.Tier != tt.tier || !slices.Equal(got.Scopes, tt.scopes) {
				t.Errorf("tier %v scopes %q, want %v %q", got.Tier, got.Scopes, tt.tier, tt.scopes)
			}
		})
	}
	// Other failures are not reported as a scope problem.
	_, err := def.Verify(t.Context(), k.token(nil, merge(claimsAt(c.now()), map[string]any{"iss": "x", "scope": "openid"})))
	if err == nil || errors.Is(err, ErrInsufficientScope) {
		t.Errorf("wrong issuer: err = %v, want invalid token without insufficient scope", err)
	}
}

func TestNewRefusesConfig(t *testing.T) {
	file := writeJWKS(t, jwks(allKeys()...))
	base := Config{Issuer: testIssuer, Audience: testAudience, JWKS: file}
	tests := []struct {
		name   string
		change func(*Config)
		errHas string
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "issuer"},
		{"no audience", func(c *Config) { c.Audience = "" }, "audience"},
		{"relative audience", func(c *Config) { c.Audience = "/mcp" }, "audience"},
		{"ftp audience", func(c *Config) { c.Audience = "ftp://h/mcp" }, "audience"},
		{"audience with fragment", func(c *Config) { c.Audience = testAudience + "#x" }, "fragment"},
		{"audience with query", func(c *Config) { c.Audience = testAudience + "?a=b" }, "query"},
		{"audience with user", func(c *Config) { c.Audience = "http://u:p@127.0.0.1/mcp" }, "user"},
		{"alg none", func(c *Config) { c.Algorithms = []string{"RS256", "none"} }, "none"},
		{"alg NONE", func(c *Config) { c.Algorithms = []string{"NONE"} }, "none"},
		{"alg HS256", func(c *Config) { c.Algorithms = []string{"HS256"} }, "HMAC"},
		{"alg hs512", func(c *Config) { c.Algorithms = []string{"hs512"} }, "HMAC"},
		{"alg unknown", func(c *Config) { c.Algorithms = []string{"RS1"} }, "unsupported"},
		{"negative skew", func(c *Config) { c.ClockSkew = -time.Second }, "skew"},
		{"skew over max", func(c *Config) { c.ClockSkew = MaxClockSkew + time.Second }, "skew"},
		{"scope with space", func(c *Config) { c.ScopeTiers = map[string]config.Tier{"a b": config.Readonly} }, "scope"},
		{"scope with quote", func(c *Config) { c.ScopeTiers = map[string]config.Tier{`a"`: config.Readonly} }, "scope"},
		{"tier zero", func(c *Config) { c.ScopeTiers = map[string]config.Tier{"a": 0} }, "tier"},
		{"tier too high", func(c *Config) { c.ScopeTiers = map[string]config.Tier{"a": config.Destructive + 1} }, "tier"},
		{"no JWKS", func(c *Config) { c.JWKS = "" }, "JWKS"},
		{"missing JWKS file", func(c *Config) { c.JWKS = file + ".missing" }, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.change(&cfg)
			_, err := New(t.Context(), cfg)
			if err == nil {
				t.Fatal("New accepted the config")
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not mention %q", err, tt.errHas)
			}
		})
	}
	// The limits themselves are accepted.
	for _, skew := range []time.Duration{time.Nanosecond, MaxClockSkew} {
		cfg := base
		cfg.ClockSkew = skew
		if _, err := New(t.Context(), cfg); err != nil {
			t.Errorf("skew %v: %v", skew, err)
		}
	}
}

// TestConfigNotAliased checks that New copies what it keeps, so a caller
// changing its map afterwards does not change what tokens may do.
func TestConfigNotAliased(t *testing.T) {
	c := newClock()
	tiers := map[string]config.Tier{"s": config.Readonly}
	v := newVerifier(t, c, Config{ScopeTiers: tiers}, allKeys()...)
	tiers["s"] = config.Destructive
	got, err := v.Verify(t.Context(), sharedKeys()["ES256"].token(nil, merge(claimsAt(c.now()), map[string]any{"scope": "s"})))
	if err != nil || got.Tier != config.Readonly {
		t.Fatalf("tier = %v, err = %v; want readonly", got.Tier, err)
	}
}

func TestIsJWT(t *testing.T) {
	good := sharedKeys()["ES256"].token(nil, claimsAt(epoch))
	tests := []struct {
		token string
		want  bool
	}{
		{good, true},
		{seg(map[string]any{"alg": "none"}) + "." + seg(map[string]any{}) + ".", true}, // shape only; Verify refuses it
		{"", false},
		{"5f2b9c0e8a7d4c1b9e3f6a2d7c8b1e4f", false},
		{"tmux-mcp_Zm9vYmFyYmF6cXV4", false},
		{"a.b.c", false},
		{seg(map[string]any{"typ": "JWT"}) + ".e30.sig", false},
		{seg([]int{1}) + ".e30.sig", false},
		{good + "." + "AAAA", false},
		{strings.Replace(good, ".", "+", 1), false},
		{strings.Replace(good, ".", ".+", 1), false},
		{good + "=", false},
		{"Bearer " + good, false},
	}
	for _, tt := range tests {
		if got := IsJWT(tt.token); got != tt.want {
			t.Errorf("IsJWT(%.40q) = %v, want %v", tt.token, got, tt.want)
		}
	}
}

// TestVerifyConcurrent runs verifications from many goroutines at once,
// for the race detector.
func TestVerifyConcurrent(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	tok := sharedKeys()["ES256"].token(nil, claimsAt(c.now()))
	bogus := sharedKeys()["ES256"].token(map[string]any{"kid": "bogus"}, claimsAt(c.now()))
	ctx := context.Background()
	c.advance(2 * time.Minute) // so the bogus kids race a reload of the set
	errs := make(chan error, 40)
	for i := range 40 {
		go func() {
			if i%2 == 0 {
				_, err := v.Verify(ctx, tok)
				errs <- err
				return
			}
			if _, err := v.Verify(ctx, bogus); err == nil {
				errs <- errors.New("bogus kid accepted")
				return
			}
			errs <- nil
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
