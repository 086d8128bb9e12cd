package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"

	jose "github.com/go-jose/go-jose/v4"
	gojson "github.com/go-jose/go-jose/v4/json"
)

// Bounds on what a JWK Set may make us hold. An authorization server
// publishes a handful of keys; these only stop a hostile or broken endpoint.
// The largest RSA modulus is go-jose's (jose.MaxRSAModulusBits, 4096).
const (
	maxKeys    = 64
	minRSABits = 2048
)

// publicKey is one usable verification key from a JWK Set.
type publicKey struct {
	kid    string
	hasKid bool
	kty    string // from the parsed key's Go type, not from the JSON
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

// jwkMembers are the members of a JWK read before go-jose parses the key:
// those that say whether the key is for us, and the private ones. go-jose's
// exported JWK decoder parses private keys too, which an untrusted set must
// not reach, so a key holding any is refused first. They are read with
// go-jose's own JSON decoder (case-sensitive, duplicates refused), so both
// readings agree.
type jwkMembers struct {
	Kty    string   `json:"kty"`
	Kid    *string  `json:"kid"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	Alg    string   `json:"alg"`
	Crv    string   `json:"crv"`

	D    gojson.RawMessage `json:"d"`
	P    gojson.RawMessage `json:"p"`
	Q    gojson.RawMessage `json:"q"`
	DP   gojson.RawMessage `json:"dp"`
	DQ   gojson.RawMessage `json:"dq"`
	QI   gojson.RawMessage `json:"qi"`
	Priv gojson.RawMessage `json:"priv"`
}

// parseJWKS reads a JWK Set (RFC 7517 §5). Keys we cannot use for signature
// verification (encryption keys, symmetric "oct" keys, unknown types or
// curves) are skipped, since a provider's set often holds some; a key that
// claims a type we know but is malformed, or that carries private material,
// fails the whole set, because that is a broken or wrongly chosen file
// rather than a key meant for someone else. A set with no usable key fails.
func parseJWKS(b []byte) ([]*publicKey, error) {
	var set struct {
		Keys []gojson.RawMessage `json:"keys"`
	}
	if err := decodeObject(b, &set); err != nil {
		return nil, fmt.Errorf("JWK Set: %w", err)
	}
	if len(set.Keys) > maxKeys {
		return nil, fmt.Errorf("JWK Set has %d keys, more than %d", len(set.Keys), maxKeys)
	}
	var keys []*publicKey
	for i, raw := range set.Keys {
		k, err := parseJWK(raw)
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

// parseJWK converts one JWK, or returns nil (and no error) for a key that
// is not for us.
func parseJWK(raw []byte) (*publicKey, error) {
	var m jwkMembers
	if err := gojson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.D != nil || m.P != nil || m.Q != nil || m.DP != nil || m.DQ != nil || m.QI != nil || m.Priv != nil {
		return nil, errors.New("contains private key material; publish only public keys")
	}
	if m.Use != "" && m.Use != "sig" {
		return nil, nil
	}
	if m.KeyOps != nil && !slices.Contains(m.KeyOps, "verify") {
		return nil, nil
	}
	if m.Alg != "" {
		a, ok := algorithms[m.Alg]
		if !ok || a.kty != m.Kty {
			return nil, nil // e.g. HS256 on an oct key, or RSA-OAEP
		}
	}
	switch {
	case m.Kty == "RSA":
	case m.Kty == "EC" && (m.Crv == "P-256" || m.Crv == "P-384" || m.Crv == "P-521"):
	case m.Kty == "OKP" && m.Crv == "Ed25519": // not X25519 or Ed448
	default:
		return nil, nil
	}
	var j jose.JSONWebKey
	if err := j.UnmarshalJSON(raw); err != nil {
		if errors.Is(err, jose.ErrUnsupportedKeyType) && m.Kty == "RSA" {
			return nil, fmt.Errorf("RSA key: modulus larger than %d bits", jose.MaxRSAModulusBits)
		}
		return nil, fmt.Errorf("%s key: %w", m.Kty, err)
	}
	k := &publicKey{alg: m.Alg, key: j.Key}
	if m.Kid != nil {
		k.kid, k.hasKid = *m.Kid, true
	}
	switch pub := j.Key.(type) {
	case *rsa.PublicKey:
		k.kty = "RSA"
		// go-jose bounds the modulus from above and the exponent loosely.
		if bits := pub.N.BitLen(); bits < minRSABits {
			return nil, fmt.Errorf("RSA key: modulus is %d bits, want at least %d", bits, minRSABits)
		}
		if pub.E < 3 || pub.E%2 == 0 || pub.E > 1<<32-1 {
			return nil, fmt.Errorf("RSA key: exponent %d is not an odd number of at least 3 and 32 bits at most", pub.E)
		}
	case *ecdsa.PublicKey:
		k.kty, k.crv = "EC", pub.Curve.Params().Name
	case ed25519.PublicKey:
		k.kty, k.crv = "OKP", "Ed25519"
	default:
		return nil, fmt.Errorf("%s key parsed as %T", m.Kty, j.Key)
	}
	return k, nil
}
