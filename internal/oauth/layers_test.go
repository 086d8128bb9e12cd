package oauth

import "testing"

// The key-to-algorithm binding is enforced twice: when a key is chosen
// (publicKey.fits) and again when the signature is checked
// (verifySignature). Each layer is tested on its own here, since through
// Verify either one hides the other's absence.

func TestKeyFits(t *testing.T) {
	tests := []struct {
		kty, crv, keyAlg, alg string
		want                  bool
	}{
		{"RSA", "", "", "RS256", true},
		{"RSA", "", "", "PS256", true},
		{"RSA", "", "RS256", "RS256", true},
		{"RSA", "", "RS256", "PS256", false},
		{"RSA", "", "", "ES256", false},
		{"RSA", "", "", "EdDSA", false},
		{"EC", "P-256", "", "ES256", true},
		{"EC", "P-256", "", "ES384", false},
		{"EC", "P-384", "", "ES256", false},
		{"EC", "P-256", "ES256", "ES256", true},
		{"EC", "P-256", "ES384", "ES256", false},
		{"EC", "P-256", "", "RS256", false},
		{"OKP", "Ed25519", "", "EdDSA", true},
		{"OKP", "Ed25519", "", "Ed25519", true},
		{"OKP", "Ed25519", "EdDSA", "Ed25519", true},
		{"OKP", "Ed25519", "Ed25519", "EdDSA", true},
		{"OKP", "Ed25519", "RS256", "EdDSA", false},
		{"OKP", "Ed448", "", "EdDSA", false},
		{"OKP", "Ed25519", "", "ES256", false},
		{"EC", "Ed25519", "", "EdDSA", false},
		{"OKP", "P-256", "", "ES256", false},
	}
	for _, tt := range tests {
		k := &publicKey{kty: tt.kty, crv: tt.crv, alg: tt.keyAlg}
		if got := k.fits(tt.alg, algorithms[tt.alg]); got != tt.want {
			t.Errorf("%s/%s key (alg %q) fits %s = %v, want %v", tt.kty, tt.crv, tt.keyAlg, tt.alg, got, tt.want)
		}
	}
}

func TestVerifySignatureRefusesMismatchedKey(t *testing.T) {
	const input = "header.payload"
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	tests := []struct {
		name string
		alg  string // the algorithm claimed
		k    *testKey
		sig  []byte // a genuine signature by k, in k's own algorithm
	}{
		{"RSA key under ES256", "ES256", rsaK, rsaK.signature("RS256", input)},
		{"RSA key under EdDSA", "EdDSA", rsaK, rsaK.signature("RS256", input)},
		{"EC key under RS256", "RS256", ecK, ecK.signature("ES256", input)},
		{"EC key under EdDSA", "EdDSA", ecK, ecK.signature("ES256", input)},
		{"Ed25519 key under RS256", "RS256", edK, edK.signature("EdDSA", input)},
		{"Ed25519 key under ES256", "ES256", edK, edK.signature("EdDSA", input)},
	}
	for _, tt := range tests {
		own := map[*testKey]string{rsaK: "RS256", ecK: "ES256", edK: "EdDSA"}[tt.k]
		if err := verifySignature(algorithms[own], tt.k.priv.Public(), input, tt.sig); err != nil {
			t.Fatalf("%s: the genuine signature does not verify under %s: %v", tt.name, own, err)
		}
		if err := verifySignature(algorithms[tt.alg], tt.k.priv.Public(), input, tt.sig); err == nil {
			t.Errorf("%s: verified", tt.name)
		}
	}
}
