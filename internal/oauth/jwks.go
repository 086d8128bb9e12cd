package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Limits on fetching a JWK Set. They bound what a slow, huge or hostile
// JWKS endpoint can cost us, and how often tokens can make us ask it.
const (
	maxJWKSBytes = 1 << 20
	// refetchInterval is the least time between two loads of the key set,
	// successful or not: a token with an unknown kid may trigger a reload (a
	// key rotation), but a flood of bogus kids costs at most one per interval.
	refetchInterval = time.Minute
	// maxKeyAge is how long a loaded set is trusted before the next token
	// reloads it (subject to refetchInterval), so a key the issuer withdrew
	// stops working even if no unknown kid ever shows up.
	maxKeyAge = 15 * time.Minute
)

// fetchTimeout bounds one load of the JWK Set (a variable so a test can
// shorten it).
var fetchTimeout = 10 * time.Second

// jwksSource loads the raw bytes of a JWK Set.
type jwksSource interface {
	load(ctx context.Context) ([]byte, error)
	String() string
}

// newSource chooses a file or a URL. A URL must be https, except plain http
// to a loopback host (an issuer on the same machine, and tests): a JWK Set
// over plain http across a network is a key anyone on the path can replace.
func newSource(s string) (jwksSource, error) {
	if s == "" {
		return nil, errors.New("JWKS: no file or URL given")
	}
	if !strings.Contains(s, "://") {
		return fileSource(s), nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("JWKS URL: %w", err)
	}
	if err := checkJWKSURL(u); err != nil {
		return nil, err
	}
	return &urlSource{url: u.String(), client: &http.Client{
		Timeout: fetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("JWKS: too many redirects")
			}
			return checkJWKSURL(req.URL) // no redirect down to plain http
		},
	}}, nil
}

func checkJWKSURL(u *url.URL) error {
	switch {
	case u.Host == "":
		return errors.New("JWKS URL has no host")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("JWKS URL must be https (or http to a loopback address), not %s://%s", u.Scheme, u.Host)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type fileSource string

func (f fileSource) String() string { return string(f) }

func (f fileSource) load(context.Context) ([]byte, error) {
	fh, err := os.Open(string(f))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return readCapped(fh)
}

type urlSource struct {
	url    string
	client *http.Client
}

func (u *urlSource) String() string { return u.url }

func (u *urlSource) load(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	return readCapped(resp.Body)
}

func readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	return b, nil
}

// keyCache holds the current key set and decides when to reload it.
type keyCache struct {
	src jwksSource
	now func() time.Time

	mu       sync.RWMutex
	keys     []*publicKey
	loadedAt time.Time

	// loadMu serializes loads, so concurrent tokens with the same new kid
	// wait for one fetch instead of each starting one.
	loadMu      sync.Mutex
	lastAttempt time.Time
	lastErr     error
	loads       int // attempts, for tests
}

// current returns the keys in use and whether they are older than maxKeyAge.
func (c *keyCache) current() ([]*publicKey, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys, c.now().Sub(c.loadedAt) >= maxKeyAge
}

// reload loads the set again unless a load was attempted less than
// refetchInterval ago. It reports the load's error, or the last one when it
// was rate-limited. A failed load keeps the previous keys: an issuer outage
// should not lock out every client holding a valid token.
func (c *keyCache) reload(ctx context.Context) error {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	now := c.now()
	if !c.lastAttempt.IsZero() && now.Sub(c.lastAttempt) < refetchInterval {
		return c.lastErr
	}
	c.lastAttempt = now
	c.loads++
	// The fetch must not be cut short by the one request that triggered it
	// (its client hanging up would waste the interval's only attempt).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	keys, err := c.fetch(ctx)
	c.lastErr = err
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.keys, c.loadedAt = keys, now
	c.mu.Unlock()
	return nil
}

func (c *keyCache) fetch(ctx context.Context) ([]*publicKey, error) {
	b, err := c.src.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load JWKS %s: %w", c.src, err)
	}
	keys, err := parseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", c.src, err)
	}
	return keys, nil
}
