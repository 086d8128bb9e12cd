package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestVerifyJOSEAttacks feeds the known attacks on JOSE verifiers through
// Verify, each with the check that must refuse it named in errHas. Several
// carry a genuine signature by a key in the set, so only the named rule
// stands between them and acceptance.
func TestVerifyJOSEAttacks(t *testing.T) {
	c := newClock()
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	attacker := genKey("ES256", ecK.kid)
	v := newVerifier(t, c, Config{Algorithms: []string{"RS256", "ES256", "ES384", "EdDSA"}}, allKeys()...)
	claims := claimsAt(c.now())
	// signed makes a token with header hdr, signed by k under hdr's alg.
	signed := func(k *testKey, hdr map[string]any) string {
		input := seg(hdr) + "." + seg(claims)
		return input + "." + b64.EncodeToString(k.signature(hdr["alg"].(string), input))
	}
	hs256 := func(secret []byte) string {
		input := seg(map[string]any{"alg": "HS256", "kid": rsaK.kid}) + "." + seg(claims)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(input))
		return input + "." + b64.EncodeToString(m.Sum(nil))
	}
	der, err := x509.MarshalPKIXPublicKey(rsaK.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	jwkJSON, err := json.Marshal(rsaK.jwk(nil))
	if err != nil {
		t.Fatal(err)
	}
	// unencoded signs the payload as RFC 7797 does with "b64": false: over
	// the raw claims, not their base64url.
	unencoded := func(k *testKey, hdr map[string]any) string {
		payload, err := json.Marshal(claims)
		if err != nil {
			t.Fatal(err)
		}
		sig := k.signature(hdr["alg"].(string), seg(hdr)+"."+string(payload))
		return seg(hdr) + "." + b64.EncodeToString(payload) + "." + b64.EncodeToString(sig)
	}
	good := ecK.token(nil, claims)
	h, rest, _ := strings.Cut(good, ".")
	p, s, _ := strings.Cut(rest, ".")
	sig, _ := b64.DecodeString(s)

	tests := []struct{ name, token, errHas string }{
		{"alg none", seg(map[string]any{"alg": "none"}) + "." + p + ".", "empty signature"},
		{"alg none with a signature", seg(map[string]any{"alg": "none", "kid": ecK.kid}) + "." + p + "." + s, "not allowed"},
		{"alg nOnE", seg(map[string]any{"alg": "nOnE"}) + "." + p + "." + s, "not allowed"},
		{"HS256 keyed with the PEM public key", hs256(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), "not allowed"},
		{"HS256 keyed with the DER public key", hs256(der), "not allowed"},
		{"HS256 keyed with the JWK", hs256(jwkJSON), "not allowed"},
		{"ES256 header, RSA key's kid, RSA signature", func() string {
			input := seg(map[string]any{"alg": "ES256", "kid": rsaK.kid}) + "." + seg(claims)
			return input + "." + b64.EncodeToString(rsaK.signature("RS256", input))
		}(), "no matching key"},
		{"RS256 header, Ed25519 key's kid", func() string {
			input := seg(map[string]any{"alg": "RS256", "kid": edK.kid}) + "." + seg(claims)
			return input + "." + b64.EncodeToString(edK.signature("EdDSA", input))
		}(), "no matching key"},
		{"ES384 header on the P-256 key", seg(map[string]any{"alg": "ES384", "kid": ecK.kid}) + "." + p + "." + s, "no matching key"},
		{"embedded jwk of the signer's own key, no kid", signed(attacker, map[string]any{"alg": "ES256", "jwk": attacker.jwk(map[string]any{"kid": nil})}), "jwk"},
		{"embedded jwk of the signer's own key, the set's kid", signed(attacker, map[string]any{"alg": "ES256", "kid": ecK.kid, "jwk": attacker.jwk(nil)}), "jwk"},
		{"embedded jwk beside a genuine signature", signed(ecK, map[string]any{"alg": "ES256", "kid": ecK.kid, "jwk": attacker.jwk(nil)}), "jwk"},
		{"jku naming another set", signed(attacker, map[string]any{"alg": "ES256", "kid": ecK.kid, "jku": "https://evil.example/jwks"}), "bad signature"},
		{"crit with an unknown extension, genuine signature", signed(ecK, map[string]any{"alg": "ES256", "kid": ecK.kid, "crit": []string{"exp"}, "exp": 1}), "crit"},
		{"crit b64 false, genuine unencoded signature", unencoded(ecK, map[string]any{"alg": "ES256", "kid": ecK.kid, "crit": []string{"b64"}, "b64": false}), "crit"},
		{"b64 false without crit, genuine unencoded signature", unencoded(ecK, map[string]any{"alg": "ES256", "kid": ecK.kid, "b64": false}), "b64"},
		{"huge token, genuine signature", ecK.token(nil, merge(claims, map[string]any{"pad": strings.Repeat("x", 1<<20)})), "longer than"},
		{"signature truncated by one byte", h + "." + p + "." + b64.EncodeToString(sig[:len(sig)-1]), "bad signature"},
		{"signature truncated to half", h + "." + p + "." + b64.EncodeToString(sig[:len(sig)/2]), "bad signature"},
		{"signature cut to one character", h + "." + p + "." + s[:1], "base64url"},
		{"signature segment missing its last character", h + "." + p + "." + s[:len(s)-1], ""},
		{"token cut inside the payload", h + "." + p[:len(p)/2], "three segments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(t.Context(), tt.token)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("error %v does not wrap ErrInvalidToken", err)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not name %q", err, tt.errHas)
			}
		})
	}
	// The genuine token the cases were cut from verifies.
	if _, err := v.Verify(t.Context(), good); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
}

// TestVerifyTruncatedSignaturePerAlgorithm cuts each algorithm's signature
// by a byte and by half, keeping the base64url canonical, so only the
// signature check can refuse it.
func TestVerifyTruncatedSignaturePerAlgorithm(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		good := sharedKeys()[alg].token(nil, claimsAt(c.now()))
		i := strings.LastIndexByte(good, '.')
		sig, _ := b64.DecodeString(good[i+1:])
		for _, n := range []int{len(sig) - 1, len(sig) / 2, 1} {
			tok := good[:i+1] + b64.EncodeToString(sig[:n])
			if _, err := v.Verify(t.Context(), tok); err == nil || !strings.Contains(err.Error(), "bad signature") {
				t.Errorf("%s signature cut to %d of %d bytes: err = %v, want bad signature", alg, n, len(sig), err)
			}
		}
	}
}

// TestVerifyHugeTokenNotDecoded checks that the size limit comes before
// any decoding: refusing a 4 MiB token allocates next to nothing, where
// decoding it would allocate megabytes.
func TestVerifyHugeTokenNotDecoded(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	k := sharedKeys()["ES256"]
	huge := k.token(nil, merge(claimsAt(c.now()), map[string]any{"pad": strings.Repeat("x", 4<<20)}))
	const runs = 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := v.Verify(t.Context(), huge); err == nil {
			t.Fatal("a 4 MiB token verified")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 64<<10 {
		t.Errorf("refusing a %d-byte token allocated %d bytes per call, want under 64 KiB", len(huge), per)
	}
}

// TestCanonicalB64 pins the strict base64url rule checkCompact applies
// before go-jose's lenient decoder sees a segment.
func TestCanonicalB64(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"", true},
		{"AA", true},   // one byte, 4 spare bits zero
		{"AB", false},  // spare bits set
		{"AAA", true},  // two bytes, 2 spare bits zero
		{"AAB", false}, // spare bits set
		{"AAAA", true},
		{"A", false}, // 6 bits make no byte
		{"AAAAA", false},
		{"AA==", false},
		{"A+/A", false},
		{"-_-_", true},
		{"AA A", false},
		{"AA\n", false},
	}
	for _, tt := range tests {
		if got := canonicalB64(tt.s); got != tt.want {
			t.Errorf("canonicalB64(%q) = %v, want %v", tt.s, got, tt.want)
		}
		// The standard strict decoder agrees, except that it skips newlines
		// (as go-jose's does): one more thing checkCompact refuses.
		if _, err := b64.DecodeString(tt.s); (err == nil) != tt.want && !strings.Contains(tt.s, "\n") {
			t.Errorf("%q: the strict standard decoder disagrees (err %v)", tt.s, err)
		}
	}
}

// TestVerifyNonCanonicalSegments sets a spare bit in the last character of
// each segment of a genuine token whose segments have spare bits: go-jose
// would decode the same bytes, so only checkCompact refuses it.
func TestVerifyNonCanonicalSegments(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	k := sharedKeys()["EdDSA"] // a 64-byte signature: 86 characters, 2 mod 4
	for pad := 0; pad < 12; pad++ {
		claims := merge(claimsAt(c.now()), map[string]any{"pad": strings.Repeat("x", pad)})
		hdr := map[string]any{"typ": strings.Repeat("J", pad)}
		good := k.token(hdr, claims)
		if _, err := v.Verify(t.Context(), good); err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		segs := strings.Split(good, ".")
		for i, sgm := range segs {
			if len(sgm)%4 == 0 {
				continue
			}
			last := strings.IndexByte(b64Alphabet, sgm[len(sgm)-1])
			bad := slicesReplace(segs, i, sgm[:len(sgm)-1]+string(b64Alphabet[last|1]))
			if _, err := v.Verify(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "canonical") {
				t.Errorf("pad %d, segment %d with a spare bit set: err = %v, want refused as not canonical", pad, i, err)
			}
		}
	}
}

func slicesReplace(segs []string, i int, s string) string {
	out := append([]string(nil), segs...)
	out[i] = s
	return strings.Join(out, ".")
}

// TestVerifyClaimsReadExactly checks that claims are read as go-jose reads
// the header: member names match exactly and a duplicated member is
// refused. encoding/json would read "Scope" as scope and keep the last of
// two, so these genuine tokens would gain a tier.
func TestVerifyClaimsReadExactly(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{}, allKeys()...)
	k := sharedKeys()["EdDSA"]
	base := `"iss":"` + testIssuer + `","sub":"alice","aud":"` + testAudience + `","exp":1800000600`
	signed := func(payload string) string {
		input := seg(map[string]any{"alg": "EdDSA", "kid": k.kid}) + "." + b64.EncodeToString([]byte(payload))
		return input + "." + b64.EncodeToString(k.signature("EdDSA", input))
	}
	if _, err := v.Verify(t.Context(), signed(`{`+base+`,"scope":"tmux:read"}`)); err != nil {
		t.Fatalf("the plain token: %v", err)
	}
	tests := map[string]string{
		"duplicated scope": `{` + base + `,"scope":"tmux:read","scope":"tmux:admin"}`,
		"duplicated sub":   `{` + base + `,"sub":"mallory","scope":"tmux:read"}`,
		"Scope for scope":  `{` + base + `,"Scope":"tmux:admin"}`,
		"ISS for iss":      `{"ISS":"` + testIssuer + `","sub":"alice","aud":"` + testAudience + `","exp":1800000600,"scope":"tmux:read"}`,
		"duplicated aud":   `{` + base + `,"aud":"https://other.example","scope":"tmux:read"}`,
	}
	for name, payload := range tests {
		got, err := v.Verify(t.Context(), signed(payload))
		if err == nil {
			t.Errorf("%s: accepted as %+v", name, got)
		} else if !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: error %v does not wrap ErrInvalidToken", name, err)
		}
	}
}
