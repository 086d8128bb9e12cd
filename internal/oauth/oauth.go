// Package oauth lets the HTTP server accept OAuth 2.0 access tokens: JWTs
// (RFC 7519) signed by one configured issuer, checked against that issuer's
// JWK Set, and mapped to a safety tier through their scopes. It also serves
// the RFC 9728 protected-resource metadata that tells an MCP client which
// authorization server to ask for such a token.
//
// It is a resource server only. It never issues tokens, never holds a
// secret, and therefore accepts asymmetric signatures only: "none" and the
// HMAC algorithms are refused at configuration time, and every key is bound
// to the one algorithm family its type allows, so a token cannot choose how
// it is checked.
//
// Decoding JWS and JWK and checking signatures is go-jose's work
// (github.com/go-jose/go-jose/v4), a library kept by people who track JOSE's
// pitfalls. What stays here is policy it leaves to its caller: the size and
// shape limits before anything is decoded, the algorithm allowlist and its
// binding to key types, which header members are refused, which key of the
// set may check a token, and the claims (issuer, audience, times with
// leeway, scopes to tiers).
package oauth

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	json "github.com/go-jose/go-jose/v4/json"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// ErrInvalidToken is wrapped by every error Verify returns. It wraps the Go
// SDK's auth.ErrInvalidToken, so auth.RequireBearerToken answers 401 for it.
var ErrInvalidToken = fmt.Errorf("oauth: %w", auth.ErrInvalidToken)

// ErrInsufficientScope is wrapped (alongside ErrInvalidToken) when a token is
// genuine but none of its scopes grants a tier, so a caller can answer 403
// with error="insufficient_scope" (RFC 6750 §3.1) instead of 401.
var ErrInsufficientScope = errors.New("oauth: insufficient scope")

// Defaults and bounds for Config.
const (
	DefaultClockSkew = 60 * time.Second
	MaxClockSkew     = 5 * time.Minute
)

// DefaultAlgorithms is the allowlist when Config.Algorithms is empty: one
// each of RSA, ECDSA and EdDSA, the algorithms authorization servers use.
func DefaultAlgorithms() []string { return []string{"RS256", "ES256", "EdDSA"} }

// DefaultScopeTiers is the scope mapping when Config.ScopeTiers is empty.
func DefaultScopeTiers() map[string]config.Tier {
	return map[string]config.Tier{
		"tmux:read":  config.Readonly,
		"tmux:write": config.Mutating,
		"tmux:admin": config.Destructive,
	}
}

// Config says whose tokens to accept and what they may do.
type Config struct {
	// Issuer is the "iss" every token must carry, compared exactly. It is
	// also the authorization server the metadata names.
	Issuer string
	// Audience is this resource's URL (e.g. http://127.0.0.1:8765/mcp). A
	// token's "aud" must contain it exactly, so a token minted for another
	// service is useless here (RFC 8707, MCP authorization spec).
	Audience string
	// JWKS is a file path, or an https:// URL (http:// only to a loopback
	// host) of the issuer's JWK Set.
	JWKS string
	// Algorithms is the "alg" allowlist; empty means DefaultAlgorithms.
	// "none" and HS256/384/512 are refused by New.
	Algorithms []string
	// ClockSkew is the tolerance on exp, nbf and iat; zero means
	// DefaultClockSkew, and more than MaxClockSkew is refused.
	ClockSkew time.Duration
	// ScopeTiers maps a scope to the safety tier it grants; a token gets
	// the highest tier among its scopes. Empty means DefaultScopeTiers.
	ScopeTiers map[string]config.Tier

	// now replaces the clock in tests.
	now func() time.Time
}

// Claims is what a verified token says about its bearer.
type Claims struct {
	Subject   string
	Issuer    string
	Audience  []string
	Scopes    []string    // every scope granted, known to ScopeTiers or not
	Tier      config.Tier // the highest tier any scope maps to
	Expiry    time.Time
	NotBefore time.Time // zero when the token has no nbf
}

// Verifier checks tokens for one Config. It is safe for concurrent use.
type Verifier struct {
	cfg     Config
	allowed map[string]algorithm
	algs    []jose.SignatureAlgorithm // the same allowlist, for go-jose
	cache   *keyCache
	now     func() time.Time
	path    string // metadata path
	metaURL string
}

// New checks cfg and loads the JWK Set once, so a wrong path, URL or key
// file fails at startup rather than on the first client.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: no issuer")
	}
	aud, err := resourceURL(cfg.Audience)
	if err != nil {
		return nil, fmt.Errorf("oauth: audience: %w", err)
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms()
	}
	allowed := make(map[string]algorithm, len(cfg.Algorithms))
	var algs []jose.SignatureAlgorithm
	for _, name := range cfg.Algorithms {
		a, ok := algorithms[name]
		switch {
		case strings.EqualFold(name, "none"):
			return nil, errors.New(`oauth: algorithm "none" is never accepted`)
		case strings.HasPrefix(strings.ToUpper(name), "HS"):
			return nil, fmt.Errorf("oauth: algorithm %q refused: HMAC needs a shared secret, and a resource server holds only public keys", name)
		case !ok:
			return nil, fmt.Errorf("oauth: unsupported algorithm %q", name)
		}
		allowed[name] = a
		algs = append(algs, jose.SignatureAlgorithm(name))
	}
	switch {
	case cfg.ClockSkew < 0:
		return nil, errors.New("oauth: negative clock skew")
	case cfg.ClockSkew == 0:
		cfg.ClockSkew = DefaultClockSkew
	case cfg.ClockSkew > MaxClockSkew:
		return nil, fmt.Errorf("oauth: clock skew %v is more than %v", cfg.ClockSkew, MaxClockSkew)
	}
	if len(cfg.ScopeTiers) == 0 {
		cfg.ScopeTiers = DefaultScopeTiers()
	} else {
		cfg.ScopeTiers = maps.Clone(cfg.ScopeTiers)
	}
	for s, t := range cfg.ScopeTiers {
		if !validScope(s) {
			return nil, fmt.Errorf("oauth: scope %q is not a valid scope token (RFC 6749 §3.3)", s)
		}
		if t < config.Readonly || t > config.Destructive {
			return nil, fmt.Errorf("oauth: scope %q maps to invalid tier %d", s, int(t))
		}
	}
	cfg.Algorithms = slices.Clone(cfg.Algorithms)
	if cfg.now == nil {
		cfg.now = time.Now
	}
	src, err := newSource(cfg.JWKS)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	cache := &keyCache{src: src, now: cfg.now}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	keys, err := cache.fetch(fctx)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	cache.keys, cache.loadedAt, cache.lastAttempt = keys, cfg.now(), cfg.now()
	v := &Verifier{cfg: cfg, allowed: allowed, algs: algs, cache: cache, now: cfg.now}
	v.path = metadataPath(aud)
	v.metaURL = aud.Scheme + "://" + aud.Host + v.path
	return v, nil
}

// validScope checks RFC 6749's scope-token grammar:
// 1*( %x21 / %x23-5B / %x5D-7E ).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidToken}, args...)...)
}

// Verify checks raw and returns its claims. Every error wraps
// ErrInvalidToken; one from a genuine token whose scopes grant no tier also
// wraps ErrInsufficientScope. Messages name the failed check, never the
// token.
func (v *Verifier) Verify(ctx context.Context, raw string) (Claims, error) {
	if err := checkCompact(raw); err != nil {
		return Claims{}, invalid("%w", err)
	}
	jws, err := jose.ParseSignedCompact(raw, v.algs)
	if ua := (*jose.ErrUnexpectedSignatureAlgorithm)(nil); errors.As(err, &ua) {
		return Claims{}, invalid("algorithm %q is not allowed", ua.Got)
	}
	if err != nil {
		return Claims{}, invalid("malformed JWS: %w", err)
	}
	h := jws.Signatures[0].Protected
	if err := checkHeader(h); err != nil {
		return Claims{}, invalid("%w", err)
	}
	alg := v.allowed[h.Algorithm]
	key, err := v.key(ctx, h.Algorithm, h.KeyID, alg)
	if err != nil {
		return Claims{}, invalid("%w", err)
	}
	payload, err := jws.Verify(verificationKey(h.Algorithm, alg, key.key))
	if err != nil {
		return Claims{}, invalid("bad signature: %w", err)
	}
	// Only now, with the signature good, is the payload worth reading.
	return v.claims(payload)
}

// errNoKey means no key in the current set fits the token; a reload may
// find one.
var errNoKey = errors.New("no matching key")

// key picks the one key that may verify a token signed with name and
// naming kid ("" when it names none). It reloads the set when it is old or
// has no fitting key (a rotation), both rate-limited by the cache.
func (v *Verifier) key(ctx context.Context, name, kid string, alg algorithm) (*publicKey, error) {
	keys, stale := v.cache.current()
	var loadErr error
	if stale {
		loadErr = v.cache.reload(ctx)
		keys, _ = v.cache.current()
	}
	k, err := selectKey(keys, name, kid, alg)
	if errors.Is(err, errNoKey) && !stale {
		loadErr = v.cache.reload(ctx)
		keys, _ = v.cache.current()
		k, err = selectKey(keys, name, kid, alg)
	}
	if err != nil && loadErr != nil {
		return nil, fmt.Errorf("%w (and reloading the JWK Set failed: %w)", err, loadErr)
	}
	return k, err
}

// selectKey requires exactly one key of the algorithm's type: by kid when
// the token names one, otherwise the only fitting key in the set, since
// trying several keys in turn would make the key choice the attacker's.
func selectKey(keys []*publicKey, name, kid string, alg algorithm) (*publicKey, error) {
	var found []*publicKey
	for _, k := range keys {
		if !k.fits(name, alg) {
			continue
		}
		if kid != "" && (!k.hasKid || k.kid != kid) {
			continue
		}
		found = append(found, k)
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && kid != "":
		return nil, fmt.Errorf("%w for kid %q and alg %s", errNoKey, kid, name)
	case len(found) == 0:
		return nil, fmt.Errorf("%w for alg %s", errNoKey, name)
	case kid != "":
		return nil, fmt.Errorf("%d keys share kid %q", len(found), kid)
	}
	return nil, fmt.Errorf("token has no kid and %d keys fit alg %s", len(found), name)
}

// payload is the registered claims we read (RFC 7519 §4.1) plus the two
// usual scope claims: "scope" (RFC 8693 §4.2, RFC 9068) and "scp" (used by
// several providers, as an array or a string).
type payload struct {
	Iss   *string         `json:"iss"`
	Sub   *string         `json:"sub"`
	Aud   json.RawMessage `json:"aud"`
	Exp   json.RawMessage `json:"exp"`
	Nbf   json.RawMessage `json:"nbf"`
	Iat   json.RawMessage `json:"iat"`
	Scope *string         `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

func (v *Verifier) claims(b []byte) (Claims, error) {
	var p payload
	if err := decodeObject(b, &p); err != nil {
		return Claims{}, invalid("claims: %w", err)
	}
	now, skew := v.now(), v.cfg.ClockSkew
	var c Claims
	var err error
	if p.Iss == nil || *p.Iss != v.cfg.Issuer {
		return Claims{}, invalid("wrong or missing issuer")
	}
	c.Issuer = *p.Iss
	if p.Sub == nil || *p.Sub == "" {
		return Claims{}, invalid("no subject")
	}
	c.Subject = *p.Sub
	if c.Audience, err = stringOrList(p.Aud); err != nil {
		return Claims{}, invalid("aud: %w", err)
	}
	if !slices.Contains(c.Audience, v.cfg.Audience) {
		return Claims{}, invalid("audience does not include %s", v.cfg.Audience)
	}
	// RFC 7519 §4.1.4: the current time must be before exp.
	exp, ok, err := numericDate(p.Exp)
	if err != nil || !ok {
		return Claims{}, invalid("exp: missing or not a NumericDate")
	}
	if !now.Before(exp.Add(skew)) {
		return Claims{}, invalid("token expired")
	}
	c.Expiry = exp
	// §4.1.5: the current time must be at or after nbf.
	nbf, ok, err := numericDate(p.Nbf)
	if err != nil {
		return Claims{}, invalid("nbf: %w", err)
	}
	if ok && now.Add(skew).Before(nbf) {
		return Claims{}, invalid("token not valid yet (nbf)")
	}
	c.NotBefore = nbf
	// §4.1.6 gives iat no rule; one in the future is a token from a clock we
	// should not trust, so it gets the same tolerance as nbf.
	iat, ok, err := numericDate(p.Iat)
	if err != nil {
		return Claims{}, invalid("iat: %w", err)
	}
	if ok && now.Add(skew).Before(iat) {
		return Claims{}, invalid("token issued in the future (iat)")
	}
	if p.Scope != nil {
		c.Scopes = strings.Fields(*p.Scope)
	}
	scp, err := stringOrList(p.Scp)
	if err != nil {
		return Claims{}, invalid("scp: %w", err)
	}
	for _, s := range scp {
		c.Scopes = append(c.Scopes, strings.Fields(s)...)
	}
	c.Scopes = dedupe(c.Scopes)
	for _, s := range c.Scopes {
		c.Tier = max(c.Tier, v.cfg.ScopeTiers[s])
	}
	if c.Tier == 0 {
		return Claims{}, fmt.Errorf("%w: %w: no scope among %q grants a tier (known: %s)",
			ErrInvalidToken, ErrInsufficientScope, c.Scopes, strings.Join(v.scopes(), " "))
	}
	return c, nil
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// decodeObject decodes a JSON object (only an object: "null", arrays and
// scalars are refused, as are trailing bytes) into v. It uses go-jose's
// JSON decoder, as go-jose does for the header: member names match exactly
// and a duplicated member is refused, so "ISS" is not read as "iss" and a
// claim cannot say two things.
func decodeObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after JSON object")
	}
	return nil
}

// stringOrList reads a claim that is a string or an array of strings (aud
// per RFC 7519 §4.1.3, scp by custom). Absent means empty.
func stringOrList(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	if string(raw) == "null" {
		return nil, errors.New("null")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, errors.New("not a string or an array of strings")
	}
	return list, nil
}

// numericDate reads seconds since the epoch (RFC 7519 §2), which may have a
// fraction. It reports false when absent. Only a JSON number is accepted, up
// to the year 9999, so the conversion to int64 seconds cannot overflow.
func numericDate(raw json.RawMessage) (time.Time, bool, error) {
	if raw == nil {
		return time.Time{}, false, nil
	}
	// raw is one JSON value, so only a JSON number parses here.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 253402300799 { // 9999-12-31
		return time.Time{}, false, errors.New("not a NumericDate")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// scopes lists the configured scopes, lowest tier first, then by name.
func (v *Verifier) scopes() []string {
	s := make([]string, 0, len(v.cfg.ScopeTiers))
	for k := range v.cfg.ScopeTiers {
		s = append(s, k)
	}
	slices.SortFunc(s, func(a, b string) int {
		return cmp.Or(cmp.Compare(v.cfg.ScopeTiers[a], v.cfg.ScopeTiers[b]), cmp.Compare(a, b))
	})
	return s
}

// IsJWT reports whether token has the shape of a compact JWS: three
// base64url segments whose first decodes to a JSON object with an "alg".
// It verifies nothing. It lets a server that also takes opaque bearer
// tokens route each token to the right check; an opaque token of our own
// making (random base64url or hex) has no dots, so never looks like one.
func IsJWT(token string) bool {
	if len(token) > maxTokenLen || strings.Count(token, ".") != 2 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	h, _, _ := strings.Cut(token, ".")
	hb, err := b64.DecodeString(h)
	if err != nil {
		return false
	}
	var hd struct {
		Alg string `json:"alg"`
	}
	return decodeObject(hb, &hd) == nil && hd.Alg != ""
}

// resourceURL checks the resource identifier rules of RFC 9728 §1.2 (an
// absolute URL with no fragment), with http allowed for a loopback server,
// and no query, which would not survive the metadata path construction.
func resourceURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("%q is not an http(s) URL", s)
	case u.Host == "":
		return nil, fmt.Errorf("%q has no host", s)
	case u.User != nil:
		return nil, fmt.Errorf("%q has user information", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("%q has a fragment", s)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("%q has a query", s)
	}
	return u, nil
}
