package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// Bounds on what a JWK Set may make us hold. An authorization server
// publishes a handful of keys; these only stop a hostile or broken endpoint.
const (
	maxKeys    = 64
	minRSABits = 2048
	maxRSABits = 8192
)

// publicKey is one usable verification key from a JWK Set.
type publicKey struct {
	kid    string
	hasKid bool
	kty    string
	crv    string
	alg    string // the JWK's own "alg", if it declared one
	key    crypto.PublicKey
}

// fits reports whether k may verify a token signed with alg under name.
// The key's type and curve must be the ones the algorithm names, and a key
// that declares its own alg admits only that alg (RFC 7517 §4.4).
func (k *publicKey) fits(name string, alg algorithm) bool {
	if k.kty != alg.kty || k.crv != alg.crv {
		return false
	}
	return k.alg == "" || sameAlg(k.alg, name)
}

// jwk is a JSON Web Key as published (RFC 7517 §4, RFC 7518 §6, RFC 8037).
type jwk struct {
	Kty    string   `json:"kty"`
	Kid    *string  `json:"kid"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	Alg    string   `json:"alg"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
	D      string   `json:"d"`
}

// parseJWKS reads a JWK Set (RFC 7517 §5). Keys we cannot use for signature
// verification (encryption keys, symmetric "oct" keys, unknown types or
// curves) are skipped, since a provider's set often holds some; a key that
// claims a type we know but is malformed, or that carries private material,
// fails the whole set, because that is a broken or wrongly chosen file
// rather than a key meant for someone else. A set with no usable key fails.
func parseJWKS(b []byte) ([]*publicKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := decodeObject(b, &set); err != nil {
		return nil, fmt.Errorf("JWK Set: %w", err)
	}
	if len(set.Keys) > maxKeys {
		return nil, fmt.Errorf("JWK Set has %d keys, more than %d", len(set.Keys), maxKeys)
	}
	var keys []*publicKey
	for i, raw := range set.Keys {
		var j jwk
		if err := decodeObject(raw, &j); err != nil {
			return nil, fmt.Errorf("JWK Set key %d: %w", i, err)
		}
		k, err := j.publicKey()
		if err != nil {
			return nil, fmt.Errorf("JWK Set key %d: %w", i, err)
		}
		if k != nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("JWK Set has no usable signature verification key")
	}
	return keys, nil
}

// publicKey converts j, or returns nil (and no error) for a key that is not
// for us.
func (j *jwk) publicKey() (*publicKey, error) {
	if j.D != "" {
		return nil, errors.New("contains private key material (\"d\"); publish only public keys")
	}
	if j.Use != "" && j.Use != "sig" {
		return nil, nil
	}
	if j.KeyOps != nil && !slices.Contains(j.KeyOps, "verify") {
		return nil, nil
	}
	if j.Alg != "" {
		a, ok := algorithms[j.Alg]
		if !ok || a.kty != j.Kty {
			return nil, nil // e.g. HS256 on an oct key, or RSA-OAEP
		}
	}
	k := &publicKey{kty: j.Kty, crv: j.Crv, alg: j.Alg}
	if j.Kid != nil {
		k.kid, k.hasKid = *j.Kid, true
	}
	var err error
	switch j.Kty {
	case "RSA":
		k.crv = ""
		k.key, err = rsaKey(j.N, j.E)
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, nil
		}
		k.key, err = ecKey(curve, j.X, j.Y)
	case "OKP":
		if j.Crv != "Ed25519" {
			return nil, nil // X25519 and Ed448 are not signature keys we verify
		}
		var x []byte
		if x, err = b64.DecodeString(j.X); err == nil && len(x) != ed25519.PublicKeySize {
			err = fmt.Errorf("Ed25519 x is %d bytes, want %d", len(x), ed25519.PublicKeySize)
		}
		k.key = ed25519.PublicKey(x)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s key: %w", j.Kty, err)
	}
	return k, nil
}

func rsaKey(n64, e64 string) (*rsa.PublicKey, error) {
	nb, err := b64.DecodeString(n64)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	eb, err := b64.DecodeString(e64)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	n := new(big.Int).SetBytes(nb)
	if bits := n.BitLen(); bits < minRSABits || bits > maxRSABits {
		return nil, fmt.Errorf("modulus is %d bits, want %d to %d", bits, minRSABits, maxRSABits)
	}
	if len(eb) == 0 || len(eb) > 4 {
		return nil, fmt.Errorf("exponent is %d bytes", len(eb))
	}
	var e int
	for _, b := range eb {
		e = e<<8 | int(b)
	}
	if e < 3 || e%2 == 0 {
		return nil, fmt.Errorf("exponent %d is not an odd number of at least 3", e)
	}
	return &rsa.PublicKey{N: n, E: e}, nil
}

func ecKey(curve elliptic.Curve, x64, y64 string) (*ecdsa.PublicKey, error) {
	x, err := b64.DecodeString(x64)
	if err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	y, err := b64.DecodeString(y64)
	if err != nil {
		return nil, fmt.Errorf("y: %w", err)
	}
	n := (curve.Params().BitSize + 7) / 8
	if len(x) != n || len(y) != n {
		return nil, fmt.Errorf("coordinates are %d and %d bytes, want %d", len(x), len(y), n)
	}
	// The uncompressed point form lets the standard library check that the
	// point is on the curve, which big.Int coordinates would not.
	pt := make([]byte, 0, 1+2*n)
	pt = append(append(append(pt, 4), x...), y...)
	return ecdsa.ParseUncompressedPublicKey(curve, pt)
}
