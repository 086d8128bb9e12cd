package oauth

import "testing"

// BenchmarkVerify measures one good token's check per algorithm: the shape
// check, JWS parse, key choice, signature and claims. Run it on the parent
// of a change to the verifier for the baseline.
func BenchmarkVerify(b *testing.B) {
	c := newClock()
	v := newVerifier(b, c, Config{}, allKeys()...)
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		tok := sharedKeys()[alg].token(nil, claimsAt(c.now()))
		b.Run(alg, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(b.Context(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
