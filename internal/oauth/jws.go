package oauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	_ "crypto/sha256" // registers SHA-256 for crypto.Hash.New
	_ "crypto/sha512" // registers SHA-384 and SHA-512
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// maxTokenLen bounds a raw token before any decoding, so a huge header
// cannot make us allocate or parse much. Real access tokens are a few KiB.
const maxTokenLen = 16 << 10

// algorithm describes one JWS "alg" (RFC 7518 §3, RFC 8037): the key type
// (and curve) it needs and how to check a signature. Binding the key type to
// the algorithm here is what rules out algorithm confusion: a token can only
// be checked with a key whose kty/crv the table names for its alg.
type algorithm struct {
	kty  string // "RSA", "EC" or "OKP"
	crv  string // for EC and OKP
	hash crypto.Hash
	pss  bool // RSASSA-PSS instead of PKCS #1 v1.5
}

// algorithms are the asymmetric algorithms we can verify. "none" and the
// HMAC family are absent on purpose: a resource server only ever holds
// public keys, and an HMAC "verified" with a public key would let anyone who
// can read the JWKS forge tokens.
var algorithms = map[string]algorithm{
	"RS256":   {kty: "RSA", hash: crypto.SHA256},
	"RS384":   {kty: "RSA", hash: crypto.SHA384},
	"RS512":   {kty: "RSA", hash: crypto.SHA512},
	"PS256":   {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384":   {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512":   {kty: "RSA", hash: crypto.SHA512, pss: true},
	"ES256":   {kty: "EC", crv: "P-256", hash: crypto.SHA256},
	"ES384":   {kty: "EC", crv: "P-384", hash: crypto.SHA384},
	"ES512":   {kty: "EC", crv: "P-521", hash: crypto.SHA512},
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

// header is the part of a JOSE header we read.
type header struct {
	Alg  string          `json:"alg"`
	Kid  *string         `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// compact is a JWS in compact serialization, split and decoded but not yet
// verified. The payload stays undecoded JSON until the signature holds.
type compact struct {
	header       header
	signingInput string // ASCII(BASE64URL(header) || '.' || BASE64URL(payload))
	payload      []byte
	signature    []byte
}

var b64 = base64.RawURLEncoding.Strict()

// parseCompact splits and decodes a compact JWS (RFC 7515 §7.1). It checks
// shape only: three segments of strict unpadded base64url, a header that is
// a JSON object with a string alg, and no "crit" (we implement no
// extensions, and §4.1.11 says a recipient that does not understand a
// critical one must reject the token).
func parseCompact(raw string) (*compact, error) {
	if len(raw) > maxTokenLen {
		return nil, fmt.Errorf("token longer than %d bytes", maxTokenLen)
	}
	h, rest, ok := strings.Cut(raw, ".")
	if !ok {
		return nil, errors.New("not a compact JWS: no '.'")
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(s, ".") {
		return nil, errors.New("not a compact JWS: want three segments")
	}
	if h == "" || p == "" || s == "" {
		return nil, errors.New("not a compact JWS: empty segment")
	}
	hb, err := b64.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	var c compact
	if err := decodeObject(hb, &c.header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if c.header.Alg == "" {
		return nil, errors.New("header: no alg")
	}
	if c.header.Crit != nil {
		return nil, errors.New("header: crit extensions are not supported")
	}
	if c.payload, err = b64.DecodeString(p); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	if c.signature, err = b64.DecodeString(s); err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	c.signingInput = raw[:len(h)+1+len(p)]
	return &c, nil
}

// decodeObject decodes a JSON object (only an object: "null", arrays and
// scalars are refused, as are trailing bytes) into v.
func decodeObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after JSON object")
	}
	return nil
}

// verifySignature checks sig over input with key under alg. The caller has
// already matched key to alg (see publicKey.fits); the type switch below
// still refuses any mismatch, so a wrong pairing fails rather than panics.
func verifySignature(alg algorithm, key crypto.PublicKey, input string, sig []byte) error {
	var digest []byte
	if alg.hash != 0 {
		h := alg.hash.New()
		h.Write([]byte(input))
		digest = h.Sum(nil)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		if alg.kty != "RSA" {
			break
		}
		if alg.pss {
			return rsa.VerifyPSS(k, alg.hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		}
		return rsa.VerifyPKCS1v15(k, alg.hash, digest, sig)
	case *ecdsa.PublicKey:
		if alg.kty != "EC" {
			break
		}
		// RFC 7518 §3.4: R and S as fixed-width big-endian octets, not ASN.1.
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return fmt.Errorf("ECDSA signature is %d bytes, want %d", len(sig), 2*n)
		}
		r := new(big.Int).SetBytes(sig[:n])
		s := new(big.Int).SetBytes(sig[n:])
		if !ecdsa.Verify(k, digest, r, s) {
			return errors.New("ECDSA verification failed")
		}
		return nil
	case ed25519.PublicKey:
		if alg.kty != "OKP" {
			break
		}
		if len(sig) != ed25519.SignatureSize || !ed25519.Verify(k, []byte(input), sig) {
			return errors.New("Ed25519 verification failed")
		}
		return nil
	}
	return fmt.Errorf("key type %T cannot verify a %s signature", key, alg.kty)
}
