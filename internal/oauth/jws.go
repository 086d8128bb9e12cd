package oauth

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	_ "crypto/sha256" // registers SHA-256 for crypto.Hash.New
	_ "crypto/sha512" // registers SHA-384 and SHA-512
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// maxTokenLen bounds a raw token before any decoding, so a huge header
// cannot make us allocate or parse much. Real access tokens are a few KiB.
const maxTokenLen = 16 << 10

// algorithm is the key type (and curve) one JWS "alg" needs (RFC 7518 §3,
// RFC 8037). A key is chosen for a token only if its kty/crv are the ones
// named here for the token's alg; go-jose then refuses the pairing again
// when it checks the signature, so algorithm confusion needs both layers to
// fail.
type algorithm struct {
	kty string // "RSA", "EC" or "OKP"
	crv string // for EC and OKP
	// pss is the hash of an RSASSA-PSS alg, which is verified by pssKey
	// rather than by go-jose (see there).
	pss crypto.Hash
}

// algorithms are the asymmetric algorithms we can verify. "none" and the
// HMAC family are absent on purpose: a resource server only ever holds
// public keys, and an HMAC "verified" with a public key would let anyone who
// can read the JWKS forge tokens.
var algorithms = map[string]algorithm{
	"RS256":   {kty: "RSA"},
	"RS384":   {kty: "RSA"},
	"RS512":   {kty: "RSA"},
	"PS256":   {kty: "RSA", pss: crypto.SHA256},
	"PS384":   {kty: "RSA", pss: crypto.SHA384},
	"PS512":   {kty: "RSA", pss: crypto.SHA512},
	"ES256":   {kty: "EC", crv: "P-256"},
	"ES384":   {kty: "EC", crv: "P-384"},
	"ES512":   {kty: "EC", crv: "P-521"},
	"EdDSA":   {kty: "OKP", crv: "Ed25519"},
	"Ed25519": {kty: "OKP", crv: "Ed25519"}, // RFC 9864's fully specified name
}

// sameAlg reports whether a JWK's declared "alg" admits a token's alg. The
// two names of Ed25519 are the same algorithm; everything else must match
// exactly.
func sameAlg(keyAlg, tokenAlg string) bool {
	if keyAlg == tokenAlg {
		return true
	}
	ed := func(a string) bool { return a == "EdDSA" || a == "Ed25519" }
	return ed(keyAlg) && ed(tokenAlg)
}

var b64 = base64.RawURLEncoding.Strict()

// b64Alphabet is base64url's alphabet (RFC 4648 §5), in value order.
const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// checkCompact refuses, before anything is decoded, a token that is too
// large or is not three non-empty segments of canonical unpadded base64url
// (RFC 7515 §2, §7.1). go-jose decodes leniently: it ignores the unused bits
// of a segment's last character, so without this check several strings
// would carry one valid signature.
func checkCompact(raw string) error {
	if len(raw) > maxTokenLen {
		return fmt.Errorf("token longer than %d bytes", maxTokenLen)
	}
	if strings.Count(raw, ".") != 2 {
		return errors.New("not a compact JWS: want three segments")
	}
	for i, s := range strings.Split(raw, ".") {
		name := [...]string{"header", "payload", "signature"}[i]
		if s == "" {
			return fmt.Errorf("not a compact JWS: empty %s", name)
		}
		if !canonicalB64(s) {
			return fmt.Errorf("%s: not canonical unpadded base64url", name)
		}
	}
	return nil
}

// canonicalB64 reports whether s is the one unpadded base64url encoding of
// some bytes: only alphabet characters, a length that is not 1 mod 4, and
// zero unused bits in the last character.
func canonicalB64(s string) bool {
	last := 0
	for i := 0; i < len(s); i++ {
		if last = strings.IndexByte(b64Alphabet, s[i]); last < 0 {
			return false
		}
	}
	switch len(s) % 4 {
	case 1:
		return false
	case 2: // 12 bits for one byte
		return last&0x0f == 0
	case 3: // 18 bits for two bytes
		return last&0x03 == 0
	}
	return true
}

// checkHeader refuses header members that would change how a token is
// read or whose key it is checked with. go-jose has already parsed the
// header (a string alg and kid, no unprotected header in the compact form).
func checkHeader(h jose.Header) error {
	// RFC 7515 §4.1.11: a recipient must reject a token with a critical
	// extension it does not implement, and we implement none. go-jose would
	// honour "b64" (RFC 7797), which changes what the signature covers.
	for _, name := range []jose.HeaderKey{"crit", "b64"} {
		if _, ok := h.ExtraHeaders[name]; ok {
			return fmt.Errorf("header: %s is not supported", name)
		}
	}
	// A token that brings its own key is the classic way around a verifier
	// (CVE-2018-0114); keys come only from the issuer's JWK Set, and a token
	// that offers another is refused outright rather than ignored.
	if h.JSONWebKey != nil {
		return errors.New("header: an embedded jwk is not accepted; keys come only from the JWK Set")
	}
	return nil
}

// verificationKey is what go-jose checks a token's signature with: the
// key itself, or a wrapper for the two algorithms go-jose does not verify
// as RFC 7518 and RFC 9864 say.
func verificationKey(name string, alg algorithm, key crypto.PublicKey) any {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if alg.pss != 0 {
			return pssKey{k, alg.pss}
		}
	case ed25519.PublicKey:
		if name == "Ed25519" {
			return ed25519Key(k)
		}
	}
	return key
}

// pssKey verifies RSASSA-PSS with the salt length RFC 7518 §3.5 fixes (the
// hash's size). go-jose verifies PSS with whatever salt length the
// signature has, which accepts signatures no JOSE signer makes.
type pssKey struct {
	key  *rsa.PublicKey
	hash crypto.Hash
}

func (k pssKey) VerifyPayload(payload, sig []byte, alg jose.SignatureAlgorithm) error {
	if a, ok := algorithms[string(alg)]; !ok || a.pss != k.hash {
		return fmt.Errorf("an RSA-PSS key for %v cannot verify %s", k.hash, alg)
	}
	h := k.hash.New()
	h.Write(payload)
	return rsa.VerifyPSS(k.key, k.hash, h.Sum(nil), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
}

// ed25519Key verifies RFC 9864's "Ed25519", which go-jose (knowing only
// "EdDSA") refuses; the check is the one go-jose makes for EdDSA.
type ed25519Key ed25519.PublicKey

func (k ed25519Key) VerifyPayload(payload, sig []byte, alg jose.SignatureAlgorithm) error {
	if alg != "Ed25519" {
		return fmt.Errorf("an Ed25519 key cannot verify %s here", alg)
	}
	if len(k) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(k), payload, sig) {
		return errors.New("Ed25519 verification failed")
	}
	return nil
}
