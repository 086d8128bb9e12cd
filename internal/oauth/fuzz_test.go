package oauth

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary strings to Verify and IsJWT. Neither may panic;
// every refusal must wrap ErrInvalidToken; and nothing the fuzzer makes may
// verify unless it is one of the seeds' valid tokens (it cannot forge a
// signature, so an acceptance of anything else is a bypass).
func FuzzVerify(f *testing.F) {
	c := newClock()
	v := newVerifier(f, c, Config{Algorithms: []string{"RS256", "ES256", "EdDSA", "PS256", "ES384"}}, allKeys()...)
	valid := map[string]bool{}
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		k := sharedKeys()[alg]
		tok := k.token(nil, claimsAt(c.now()))
		valid[tok] = true
		f.Add(tok)
		h, rest, _ := strings.Cut(tok, ".")
		p, _, _ := strings.Cut(rest, ".")
		f.Add(h + "." + p + ".")
		f.Add(h + "." + p)
		f.Add(seg(map[string]any{"alg": "none"}) + "." + p + ".")
		f.Add(seg(map[string]any{"alg": alg, "kid": 7}) + "." + p + ".AAAA")
		f.Add(seg(map[string]any{"alg": alg, "crit": []string{"b64"}}) + "." + p + ".AAAA")
	}
	for _, s := range []string{"", ".", "..", "...", "a.b.c", "eyJ.eyJ.eyJ", "e30.e30.e30", "bnVsbA.bnVsbA.bnVsbA"} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		isJWT := IsJWT(s)
		claims, err := v.Verify(ctx, s)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("error %v does not wrap ErrInvalidToken", err)
			}
			return
		}
		if !valid[s] {
			t.Fatalf("accepted a token the test never signed: %q -> %+v", s, claims)
		}
		if !isJWT {
			t.Fatalf("Verify accepted %q but IsJWT says it is not a JWT", s)
		}
	})
}
