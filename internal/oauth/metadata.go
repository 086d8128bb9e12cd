package oauth

import (
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// WellKnownPath is the RFC 9728 well-known URI suffix. The metadata of a
// resource with a path lives at this prefix followed by that path
// (MetadataPath); an MCP client that finds nothing there falls back to this
// bare path, so a server may serve MetadataHandler at both.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// metadataPath inserts the well-known suffix between the host and the path
// of the resource URL (RFC 9728 §3.1): http://h/mcp has its metadata at
// http://h/.well-known/oauth-protected-resource/mcp.
func metadataPath(resource *url.URL) string {
	p := resource.EscapedPath()
	if p == "/" {
		p = ""
	}
	return WellKnownPath + p
}

// Metadata returns the protected-resource metadata document (RFC 9728 §2):
// this resource, its one authorization server (the issuer), the scopes it
// understands, and that tokens go in the Authorization header only.
func (v *Verifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.cfg.Audience,
		AuthorizationServers:   []string{v.cfg.Issuer},
		ScopesSupported:        v.scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "tmux-mcp",
	}
}

// MetadataHandler serves Metadata as JSON. It is the Go SDK's handler, which
// answers GET, and OPTIONS for CORS preflight (the document is public, so it
// allows any origin, as RFC 9728 discovery by browser clients needs).
func (v *Verifier) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(v.Metadata())
}

// MetadataPath is where MetadataHandler belongs on this resource's server:
// WellKnownPath followed by the path of Config.Audience.
func (v *Verifier) MetadataPath() string { return v.path }

// ResourceMetadataURL is the absolute URL of the metadata, for the
// resource_metadata parameter of a WWW-Authenticate challenge (RFC 9728 §5.1;
// auth.RequireBearerTokenOptions.ResourceMetadataURL).
func (v *Verifier) ResourceMetadataURL() string { return v.metaURL }
