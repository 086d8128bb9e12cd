package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/oauth"
)

// Credentials are what the daemon accepts as bearer tokens, and the OAuth
// metadata to publish when OAuth is configured.
type Credentials struct {
	Checkers            []TokenChecker
	OAuthMetadata       http.Handler
	ResourceMetadataURL string

	// TokensFile is the checker of --tokens-file or of the generated
	// token (one of Checkers), to reload on SIGHUP; nil when the tokens
	// come from TMUX_MCP_HTTP_TOKEN or OAuth alone.
	TokensFile *TokensFile
}

// EnvTokenName is the name of the TMUX_MCP_HTTP_TOKEN token in logs and
// audit records.
const EnvTokenName = "env"

// LoadCredentials builds the credentials from the configuration: the
// tokens file, TMUX_MCP_HTTP_TOKEN and OAuth (any of them, tried in that
// order). With none, it generates a token into a 0600 file under the
// user's config directory at the first start, and logs where the file is,
// never the token. There is no way to turn authentication off.
func LoadCredentials(ctx context.Context, cfg config.Config, resourceURL string, log *slog.Logger) (Credentials, error) {
	var cr Credentials
	h := cfg.HTTP
	if h.TokensFile != "" {
		tf, err := OpenTokensFile(h.TokensFile, cfg.Safety)
		if err != nil {
			return cr, err
		}
		cr.Checkers = append(cr.Checkers, tf)
		cr.TokensFile = tf
		log.Info("bearer tokens loaded", "file", h.TokensFile, "tokens", tf.Len())
	}
	if h.Token != "" {
		st, err := SingleToken(h.Token, EnvTokenName, cfg.Safety)
		if err != nil {
			return cr, err
		}
		cr.Checkers = append(cr.Checkers, st)
		log.Info("bearer token from "+config.HTTPTokenEnv, "name", EnvTokenName)
	}
	if h.OAuthIssuer != "" || h.OAuthJWKS != "" {
		c, meta, metaURL, err := oauthChecker(ctx, cfg, resourceURL)
		if err != nil {
			return cr, err
		}
		cr.Checkers = append(cr.Checkers, c)
		cr.OAuthMetadata, cr.ResourceMetadataURL = meta, metaURL
	}
	if len(cr.Checkers) > 0 {
		return cr, nil
	}
	path, err := DefaultTokenPath()
	if err != nil {
		return cr, err
	}
	tf, created, err := OpenGeneratedToken(path, cfg.Safety)
	if err != nil {
		return cr, err
	}
	if created {
		log.Info("generated a bearer token (clients send it as Authorization: Bearer <token>)", "file", path)
	} else {
		log.Info("using the generated bearer token", "file", path)
	}
	cr.Checkers = append(cr.Checkers, tf)
	cr.TokensFile = tf
	return cr, nil
}

// ErrInsufficientScope is wrapped by a TokenChecker's error for a genuine
// token that grants no tier: the client gets 403 with
// error="insufficient_scope" (RFC 6750) rather than 401.
var ErrInsufficientScope = errors.New("the token's scopes grant no safety tier")

// oauthChecker builds the JWT checker (package oauth) and the RFC 9728
// metadata handler. The audience defaults to this server's /mcp URL.
func oauthChecker(ctx context.Context, cfg config.Config, resourceURL string) (TokenChecker, http.Handler, string, error) {
	h := cfg.HTTP
	if h.OAuthIssuer == "" || h.OAuthJWKS == "" {
		return nil, nil, "", fmt.Errorf("%w: OAuth needs both --oauth-issuer and --oauth-jwks", config.ErrInvalid)
	}
	aud := h.OAuthAudience
	if aud == "" {
		aud = resourceURL
	}
	v, err := oauth.New(ctx, oauth.Config{Issuer: h.OAuthIssuer, Audience: aud, JWKS: h.OAuthJWKS, ScopeTiers: h.OAuthScopeTiers})
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return jwtChecker{v: v, max: cfg.Safety, scope: h.OAuthScope}, v.MetadataHandler(), v.ResourceMetadataURL(), nil
}

// jwtChecker accepts JWTs from the configured issuer. The identity is
// "oauth:" plus the token's subject (so it never collides with a static
// token's name); the tier is the one its scopes grant, at most the
// server's; the sessions it may reach are --oauth-session-scope's (own:
// each subject its own).
type jwtChecker struct {
	v     *oauth.Verifier
	max   config.Tier
	scope string // config.HTTP.OAuthScope; "": the server's --scope
}

func (j jwtChecker) Check(ctx context.Context, token string) (Identity, error) {
	if !oauth.IsJWT(token) {
		return Identity{}, ErrUnknownToken
	}
	c, err := j.v.Verify(ctx, token)
	switch {
	case errors.Is(err, oauth.ErrInsufficientScope):
		return Identity{}, fmt.Errorf("%w: %w: %w", ErrUnknownToken, ErrInsufficientScope, err)
	case err != nil:
		return Identity{}, fmt.Errorf("%w: %w", ErrUnknownToken, err)
	case c.Subject == "":
		return Identity{}, fmt.Errorf("%w: the token has no subject", ErrUnknownToken)
	}
	return Identity{Name: "oauth:" + c.Subject, Tier: min(c.Tier, j.max), Expiry: c.Expiry, Scope: j.scope}, nil
}
