package oauth

import (
	"crypto/ed25519"
	"crypto/rsa"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// The key-to-algorithm binding is enforced twice: when a key is chosen
// (publicKey.fits) and again when go-jose checks the signature with the key
// verificationKey hands it. Each layer is tested on its own here, since
// through Verify either one hides the other's absence; the same cases then
// go through Verify as a whole.

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

// mismatchCases are genuine signatures by one key, each presented under an
// algorithm of another key type (or curve), with the kid of the signing key.
func mismatchCases() []struct {
	name string
	alg  string // the algorithm claimed
	k    *testKey
	own  string // the algorithm k really signed with
} {
	rsaK, ecK, edK := sharedKeys()["RS256"], sharedKeys()["ES256"], sharedKeys()["EdDSA"]
	return []struct {
		name string
		alg  string
		k    *testKey
		own  string
	}{
		{"RSA key under ES256", "ES256", rsaK, "RS256"},
		{"RSA key under EdDSA", "EdDSA", rsaK, "RS256"},
		{"RSA key under Ed25519", "Ed25519", rsaK, "RS256"},
		{"RSA PKCS#1 signature under PS256", "PS256", rsaK, "RS256"},
		{"RSA PSS signature under RS256", "RS256", rsaK, "PS256"},
		{"EC key under RS256", "RS256", ecK, "ES256"},
		{"EC key under PS256", "PS256", ecK, "ES256"},
		{"EC key under EdDSA", "EdDSA", ecK, "ES256"},
		{"P-256 key under ES384", "ES384", ecK, "ES256"},
		{"Ed25519 key under RS256", "RS256", edK, "EdDSA"},
		{"Ed25519 key under ES256", "ES256", edK, "EdDSA"},
	}
}

var allAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}

// TestSignatureLayerRefusesMismatchedKey checks the second layer alone:
// go-jose, given the key through verificationKey, refuses a signature
// claimed under an algorithm that is not the key's, even when selectKey is
// skipped.
func TestSignatureLayerRefusesMismatchedKey(t *testing.T) {
	var algs []jose.SignatureAlgorithm
	for _, a := range allAlgorithms {
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	check := func(alg string, k *testKey, sigAlg string) error {
		input := seg(map[string]any{"alg": alg, "kid": k.kid}) + "." + seg(claimsAt(epoch))
		jws, err := jose.ParseSignedCompact(input+"."+b64.EncodeToString(k.signature(sigAlg, input)), algs)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		_, err = jws.Verify(verificationKey(alg, algorithms[alg], k.priv.Public()))
		return err
	}
	for _, tt := range mismatchCases() {
		if err := check(tt.own, tt.k, tt.own); err != nil {
			t.Fatalf("%s: the genuine signature does not verify under %s: %v", tt.name, tt.own, err)
		}
		if err := check(tt.alg, tt.k, tt.own); err == nil {
			t.Errorf("%s: verified", tt.name)
		}
	}
	// The two algorithms verified by our own wrappers, under their own name.
	ed := sharedKeys()["EdDSA"]
	if err := check("Ed25519", ed, "Ed25519"); err != nil {
		t.Errorf("Ed25519 under its RFC 9864 name: %v", err)
	}
	rsaK := sharedKeys()["RS256"]
	ps := pssKey{rsaK.priv.Public().(*rsa.PublicKey), algorithms["PS256"].pss}
	if err := ps.VerifyPayload([]byte("x"), rsaK.signature("PS256", "x"), "PS256"); err != nil {
		t.Errorf("PS256 wrapper: %v", err)
	}
	if err := ps.VerifyPayload([]byte("x"), rsaK.signature("PS256", "x"), "PS384"); err == nil {
		t.Error("a PS256 key wrapper verified under PS384")
	}
	if err := ed25519Key(ed.priv.Public().(ed25519.PublicKey)).VerifyPayload([]byte("x"), ed.signature("EdDSA", "x"), "EdDSA"); err == nil {
		t.Error("the Ed25519 wrapper verified under another name than Ed25519")
	}
}

// TestVerifyRefusesMismatchedKey sends the same cases through Verify, with
// every algorithm allowed and one key of each kind in the set.
func TestVerifyRefusesMismatchedKey(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{Algorithms: allAlgorithms}, allKeys()...)
	for _, tt := range mismatchCases() {
		token := func(alg string) string {
			input := seg(map[string]any{"alg": alg, "kid": tt.k.kid}) + "." + seg(claimsAt(c.now()))
			return input + "." + b64.EncodeToString(tt.k.signature(tt.own, input))
		}
		if _, err := v.Verify(t.Context(), token(tt.own)); err != nil {
			t.Fatalf("%s: the genuine token does not verify under %s: %v", tt.name, tt.own, err)
		}
		if _, err := v.Verify(t.Context(), token(tt.alg)); err == nil {
			t.Errorf("%s: verified", tt.name)
		}
	}
}
