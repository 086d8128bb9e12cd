package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// Credentials are what the daemon accepts as bearer tokens, and the OAuth
// metadata to publish when OAuth is configured.
type Credentials struct {
	Checkers            []TokenChecker
	OAuthMetadata       http.Handler
	ResourceMetadataURL string
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
		st, err := LoadTokensFile(h.TokensFile, cfg.Safety)
		if err != nil {
			return cr, err
		}
		cr.Checkers = append(cr.Checkers, st)
		log.Info("bearer tokens loaded", "file", h.TokensFile, "tokens", st.Len())
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
	tok, created, err := EnsureTokenFile(path)
	if err != nil {
		return cr, fmt.Errorf("the generated bearer token: %w", err)
	}
	st, err := SingleToken(tok, GeneratedTokenName, cfg.Safety)
	if err != nil {
		return cr, err
	}
	if created {
		log.Info("generated a bearer token (clients send it as Authorization: Bearer <token>)", "file", path)
	} else {
		log.Info("using the generated bearer token", "file", path)
	}
	cr.Checkers = append(cr.Checkers, st)
	return cr, nil
}

// ErrOAuthUnavailable is returned when OAuth is configured but this build
// has no JWT verifier wired in.
var ErrOAuthUnavailable = errors.New("OAuth (--oauth-issuer, --oauth-jwks) is not available in this build; use bearer tokens")

// oauthChecker builds the JWT checker and the RFC 9728 metadata handler.
// The verifier lives in package internal/oauth; wiring it is:
//
//	v, err := oauth.New(ctx, oauth.Config{Issuer: h.OAuthIssuer, Audience: aud, JWKS: h.OAuthJWKS, ScopeTiers: h.OAuthScopeTiers})
//	return jwtChecker{v, cfg.Safety}, v.MetadataHandler(), metadataURL, err
//
// where jwtChecker.Check maps the verified claims to an Identity (Name
// "oauth:"+subject, Tier the claims' tier, Expiry the claims' expiry).
func oauthChecker(_ context.Context, _ config.Config, _ string) (TokenChecker, http.Handler, string, error) {
	return nil, nil, "", fmt.Errorf("%w: %w", config.ErrInvalid, ErrOAuthUnavailable)
}
