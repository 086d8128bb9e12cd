package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testIssuer   = "https://issuer.example"
	testAudience = "http://127.0.0.1:8765/mcp"
)

// epoch is the fake "now" every test starts at.
var epoch = time.Unix(1_800_000_000, 0)

// clock is a settable time source for the verifier under test.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(epoch.UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.t.Load()) }
func (c *clock) advance(d time.Duration) { c.t.Add(int64(d)) }

// testKey is a key pair the test made, with its JWK.
type testKey struct {
	alg  string
	kid  string
	priv crypto.Signer
}

// Key generation (RSA especially) is slow under -race; every test shares
// one key of each kind, and makes more only when it needs distinct ones.
var sharedKeys = sync.OnceValue(func() map[string]*testKey {
	return map[string]*testKey{
		"RS256": genKey("RS256", "rsa-1"),
		"ES256": genKey("ES256", "ec-1"),
		"EdDSA": genKey("EdDSA", "ed-1"),
	}
})

func genKey(alg, kid string) *testKey {
	k := &testKey{alg: alg, kid: kid}
	var err error
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		k.priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		k.priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		k.priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ES512":
		k.priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "EdDSA", "Ed25519":
		_, k.priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		panic("genKey: " + alg)
	}
	if err != nil {
		panic(err)
	}
	return k
}

// jwk renders the public half as a JWK, with extra members merged in (a
// nil value deletes a member).
func (k *testKey) jwk(extra map[string]any) map[string]any {
	m := map[string]any{"kid": k.kid}
	switch pub := k.priv.Public().(type) {
	case *rsa.PublicKey:
		m["kty"] = "RSA"
		m["n"] = b64.EncodeToString(pub.N.Bytes())
		m["e"] = b64.EncodeToString([]byte{1, 0, 1})
	case *ecdsa.PublicKey:
		m["kty"] = "EC"
		m["crv"] = pub.Curve.Params().Name
		n := (pub.Curve.Params().BitSize + 7) / 8
		pt, err := pub.Bytes()
		if err != nil {
			panic(err)
		}
		m["x"] = b64.EncodeToString(pt[1 : 1+n])
		m["y"] = b64.EncodeToString(pt[1+n:])
	case ed25519.PublicKey:
		m["kty"] = "OKP"
		m["crv"] = "Ed25519"
		m["x"] = b64.EncodeToString(pub)
	}
	for name, v := range extra {
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
	}
	return m
}

func jwks(keys ...map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		panic(err)
	}
	return b
}

// signature computes a JWS signature of input with k under alg.
func (k *testKey) signature(alg, input string) []byte {
	sum := func(h crypto.Hash) []byte {
		d := h.New()
		d.Write([]byte(input))
		return d.Sum(nil)
	}
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, sum(crypto.SHA256))
	case "RS384":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA384, sum(crypto.SHA384))
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, sum(crypto.SHA256), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256", "ES384", "ES512":
		h := map[string]crypto.Hash{"ES256": crypto.SHA256, "ES384": crypto.SHA384, "ES512": crypto.SHA512}[alg]
		priv := k.priv.(*ecdsa.PrivateKey)
		r, s, e := ecdsa.Sign(rand.Reader, priv, sum(h))
		if e != nil {
			panic(e)
		}
		n := (priv.Curve.Params().BitSize + 7) / 8
		sig = make([]byte, 2*n)
		r.FillBytes(sig[:n])
		s.FillBytes(sig[n:])
	case "EdDSA", "Ed25519":
		sig = ed25519.Sign(k.priv.(ed25519.PrivateKey), []byte(input))
	default:
		panic("signature: " + alg)
	}
	if err != nil {
		panic(err)
	}
	return sig
}

// claimsAt returns a valid claim set for a token issued at now.
func claimsAt(now time.Time) map[string]any {
	return map[string]any{
		"iss":   testIssuer,
		"sub":   "alice",
		"aud":   testAudience,
		"iat":   now.Unix(),
		"exp":   now.Add(10 * time.Minute).Unix(),
		"scope": "tmux:read",
	}
}

// merge copies base and applies changes (a nil value deletes a member).
func merge(base, changes map[string]any) map[string]any {
	m := make(map[string]any, len(base))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func seg(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b64.EncodeToString(b)
}

// token signs claims with k under k's alg, with kid set to k's kid; hdr
// changes the header (nil values delete members).
func (k *testKey) token(hdr, claims map[string]any) string {
	h := merge(map[string]any{"alg": k.alg, "kid": k.kid, "typ": "JWT"}, hdr)
	input := seg(h) + "." + seg(claims)
	return input + "." + b64.EncodeToString(k.signature(h["alg"].(string), input))
}

// writeJWKS writes a JWK Set file in a test directory.
func writeJWKS(t testing.TB, set []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, set, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// newVerifier makes a verifier on a JWKS file holding keys, at clock c.
func newVerifier(t testing.TB, c *clock, cfg Config, keys ...map[string]any) *Verifier {
	t.Helper()
	cfg.Issuer = or(cfg.Issuer, testIssuer)
	cfg.Audience = or(cfg.Audience, testAudience)
	if cfg.JWKS == "" {
		cfg.JWKS = writeJWKS(t, jwks(keys...))
	}
	cfg.now = c.now
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jwksServer serves a JWK Set that the test can replace, over real HTTP,
// and counts the requests it gets.
type jwksServer struct {
	*httptest.Server
	mu     sync.Mutex
	body   []byte
	status int
	hits   atomic.Int64
}

func newJWKSServer(t *testing.T, body []byte) *jwksServer {
	s := &jwksServer{body: body, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(status int, body []byte) {
	s.mu.Lock()
	s.body, s.status = body, status
	s.mu.Unlock()
}
