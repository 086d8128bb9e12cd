package httpserve

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/scope"
)

// Identity is who a bearer token says the caller is: Name goes into every
// audit record and request log line, keys the client's state and is the
// owner of the sessions it creates; Tier caps the tools it may call (never
// above the server's tier); Scope confines it to some sessions.
type Identity struct {
	Name   string
	Tier   config.Tier
	Expiry time.Time // zero: the token does not expire (static tokens)
	// Scope is the token's own scope in scope.Parse's canonical syntax
	// ("none" for an explicit none); "" leaves the caller to the server's
	// --scope.
	Scope string
}

// TokenChecker verifies a bearer token. Static tokens and, when
// configured, OAuth JWTs are each a TokenChecker; the daemon tries them in
// order and the first that accepts the token wins. A checker that does not
// recognise a token returns an error wrapping ErrUnknownToken.
type TokenChecker interface {
	Check(ctx context.Context, token string) (Identity, error)
}

// ErrUnknownToken is returned by a TokenChecker for a token it does not
// accept. The caller gets 401; the message never repeats the token.
var ErrUnknownToken = errors.New("unknown bearer token")

// StaticTokens checks tokens against a fixed list, in constant time: every
// entry is compared (as SHA-256 digests, so the length of a token leaks
// nothing either) whatever matches.
type StaticTokens struct {
	entries []staticToken
}

type staticToken struct {
	sum [sha256.Size]byte
	id  Identity
}

// Check implements TokenChecker.
func (st *StaticTokens) Check(_ context.Context, token string) (Identity, error) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range st.entries {
		if subtle.ConstantTimeCompare(sum[:], st.entries[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Identity{}, ErrUnknownToken
	}
	return st.entries[found].id, nil
}

// Len is the number of tokens.
func (st *StaticTokens) Len() int { return len(st.entries) }

// minTokenLen refuses tokens short enough to guess.
const minTokenLen = 16

// SingleToken is the checker for TMUX_MCP_HTTP_TOKEN: one token, named
// name, at the server's tier.
func SingleToken(token, name string, tier config.Tier) (*StaticTokens, error) {
	if len(token) < minTokenLen {
		return nil, fmt.Errorf("%w: %s must be at least %d characters", config.ErrInvalid, config.HTTPTokenEnv, minTokenLen)
	}
	return &StaticTokens{entries: []staticToken{{sum: sha256.Sum256([]byte(token)), id: Identity{Name: name, Tier: tier}}}}, nil
}

// ParseTokens reads a tokens file: one token per line as
// `TOKEN [NAME [TIER [SCOPE]]]`, whitespace-separated, blank lines and #
// comments ignored. A token without a name is named after its line
// ("line-3"); one without a tier gets the server's; one without a scope is
// confined by the server's --scope. A tier above the server's, a scope
// that does not parse, a repeated token or name, or a short token is an
// error naming the line, never the token.
func ParseTokens(r io.Reader, serverTier config.Tier) (*StaticTokens, error) {
	st := &StaticTokens{}
	names := map[string]int{}
	sums := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(r)
	var errs []error
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) > 4 {
			errs = append(errs, fmt.Errorf("line %d: expected TOKEN [NAME [TIER [SCOPE]]], got %d fields", n, len(f)))
			continue
		}
		if len(f[0]) < minTokenLen {
			errs = append(errs, fmt.Errorf("line %d: the token is shorter than %d characters", n, minTokenLen))
			continue
		}
		id := Identity{Name: fmt.Sprintf("line-%d", n), Tier: serverTier}
		if len(f) > 1 {
			id.Name = f[1]
		}
		if len(f) > 2 {
			t, ok := config.ParseTier(f[2])
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("line %d: tier must be readonly, mutating or destructive", n))
				continue
			case t > serverTier:
				errs = append(errs, fmt.Errorf("line %d: tier %s is above the server's tier %s", n, t, serverTier))
				continue
			}
			id.Tier = t
		}
		if len(f) > 3 {
			sc, err := scope.Parse(f[3])
			if err != nil {
				errs = append(errs, fmt.Errorf("line %d: %w", n, err))
				continue
			}
			id.Scope = sc.String()
		}
		sum := sha256.Sum256([]byte(f[0]))
		if prev, dup := sums[sum]; dup {
			errs = append(errs, fmt.Errorf("line %d: the same token as line %d", n, prev))
			continue
		}
		if prev, dup := names[id.Name]; dup {
			errs = append(errs, fmt.Errorf("line %d: the name %q is already used on line %d", n, id.Name, prev))
			continue
		}
		sums[sum], names[id.Name] = n, n
		st.entries = append(st.entries, staticToken{sum: sum, id: id})
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 && len(st.entries) == 0 {
		errs = append(errs, errors.New("no token in the file"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return st, nil
}

// LoadTokensFile reads a tokens file after checking that nobody but its
// owner can read it: a file readable by the group or the world is refused.
func LoadTokensFile(path string, serverTier config.Tier) (*StaticTokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens file: %w", config.ErrInvalid, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: tokens file: %w", config.ErrInvalid, err)
	}
	if err := checkPrivate(path, fi); err != nil {
		return nil, err
	}
	st, err := ParseTokens(f, serverTier)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens file %s: %w", config.ErrInvalid, path, err)
	}
	return st, nil
}

// TokensFile is the checker of --tokens-file, or of the generated token's
// file: the file's tokens, read again by Reload, so an operator revokes or
// rotates a token without restarting the daemon (and ending every
// client's session).
type TokensFile struct {
	path string
	load func() (*StaticTokens, error)
	cur  atomic.Pointer[StaticTokens]
}

// OpenTokensFile loads path (LoadTokensFile) as a reloadable checker.
func OpenTokensFile(path string, serverTier config.Tier) (*TokensFile, error) {
	return openTokens(path, func() (*StaticTokens, error) { return LoadTokensFile(path, serverTier) })
}

// OpenGeneratedToken is the checker of the generated token kept at path
// (EnsureTokenFile): created says the file was made now. Reload reads the
// file again, and makes a new token when the file is gone, so deleting it
// and sending SIGHUP rotates the token.
func OpenGeneratedToken(path string, serverTier config.Tier) (*TokensFile, bool, error) {
	load := func() (*StaticTokens, bool, error) {
		tok, created, err := EnsureTokenFile(path)
		if err != nil {
			return nil, false, fmt.Errorf("the generated bearer token: %w", err)
		}
		st, err := SingleToken(tok, GeneratedTokenName, serverTier)
		return st, created, err
	}
	st, created, err := load()
	if err != nil {
		return nil, false, err
	}
	tf := &TokensFile{path: path, load: func() (*StaticTokens, error) {
		st, _, err := load()
		return st, err
	}}
	tf.cur.Store(st)
	return tf, created, nil
}

func openTokens(path string, load func() (*StaticTokens, error)) (*TokensFile, error) {
	st, err := load()
	if err != nil {
		return nil, err
	}
	tf := &TokensFile{path: path, load: load}
	tf.cur.Store(st)
	return tf, nil
}

// Check implements TokenChecker with the tokens last loaded.
func (tf *TokensFile) Check(ctx context.Context, token string) (Identity, error) {
	return tf.cur.Load().Check(ctx, token)
}

// Len is the number of tokens last loaded.
func (tf *TokensFile) Len() int { return tf.cur.Load().Len() }

// Path is the file's path.
func (tf *TokensFile) Path() string { return tf.path }

// Reload reads the file again, with the checks of the first load. When
// anything is wrong with it the tokens in use stay and the error says why.
// Otherwise the new tokens take effect for every request from now on, and
// Reload returns the names whose token was removed or replaced, or whose
// tier or scope changed: what their clients opened with the old token
// (sessions, listen streams) must not outlive it (Daemon.Revoke).
func (tf *TokensFile) Reload() (changed []string, err error) {
	st, err := tf.load()
	if err != nil {
		return nil, err
	}
	old := tf.cur.Swap(st)
	now := make(map[string]staticToken, len(st.entries))
	for _, e := range st.entries {
		now[e.id.Name] = e
	}
	for _, e := range old.entries {
		if n, ok := now[e.id.Name]; !ok || n.sum != e.sum || n.id.Tier != e.id.Tier || n.id.Scope != e.id.Scope {
			changed = append(changed, e.id.Name)
		}
	}
	return changed, nil
}

// ErrFileExposed is returned for a secret file that others can read.
var ErrFileExposed = errors.New("readable by other users")

func checkPrivate(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: tokens file %s is not a regular file", config.ErrInvalid, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s is %w (mode %04o): run chmod 600 %s", config.ErrInvalid, path, ErrFileExposed, perm, path)
	}
	return nil
}

// DefaultTokenPath is where serve --http keeps the token it generates when
// neither TMUX_MCP_HTTP_TOKEN nor --tokens-file is given:
// os.UserConfigDir()/tmux-mcp/http-token.
func DefaultTokenPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for the generated token (set %s or --tokens-file): %w", config.HTTPTokenEnv, err)
	}
	return filepath.Join(dir, "tmux-mcp", "http-token"), nil
}

// GeneratedTokenName is the name of the generated token in logs and audit
// records.
const GeneratedTokenName = "generated"

// EnsureTokenFile returns the token kept at path, generating one (256
// random bits, in a 0600 file in a 0700 directory) when the file does not
// exist. created says whether it did. An existing file that others can read
// is refused, like a tokens file.
func EnsureTokenFile(path string) (token string, created bool, err error) {
	if b, err := os.ReadFile(path); err == nil {
		fi, err := os.Stat(path)
		if err != nil {
			return "", false, err
		}
		if err := checkPrivate(path, fi); err != nil {
			return "", false, err
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) < minTokenLen {
			return "", false, fmt.Errorf("%w: %s holds no usable token; delete it to generate a new one", config.ErrInvalid, path)
		}
		return tok, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	tok := "tmcp_" + rand.Text() + rand.Text()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	if err := f.Close(); err != nil {
		return "", false, err
	}
	return tok, true, nil
}
