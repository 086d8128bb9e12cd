package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ReadMeta reads the project's name, title, description and addresses
// from the committed server.json.
func ReadMeta(serverJSON []byte) (Meta, error) {
	var doc struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		WebsiteURL  string `json:"websiteUrl"`
		Repository  struct {
			URL string `json:"url"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(serverJSON, &doc); err != nil {
		return Meta{}, fmt.Errorf("server.json: %w", err)
	}
	m := Meta{Name: doc.Name, Title: doc.Title, Description: doc.Description, Website: doc.WebsiteURL, Repository: doc.Repository.URL}
	if m.Name == "" || m.Title == "" || m.Description == "" || !strings.HasPrefix(m.Repository, "https://") {
		return Meta{}, errors.New("server.json lacks its name, title, description or https repository url")
	}
	return m, nil
}

// Bundle is a packed bundle as the release publishes it.
type Bundle struct {
	File   string // file name, as BundleName makes it
	SHA256 string // hex
}

// ServerJSON makes the server.json a release publishes from the committed
// one: the release's version at its top and in the OCI image's tag, and
// after the image one mcpb package per bundle, downloaded from the
// release's assets (tag is the git tag, e.g. v1.2.3) and verified by its
// fileSha256. Each bundle takes the image's environment variables, since
// it runs the same server. The result is checked by Validate before it
// is returned.
func ServerJSON(committed []byte, version, tag string, bundles []Bundle, schema []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(committed, &doc); err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	meta, err := ReadMeta(committed)
	if err != nil {
		return nil, err
	}
	if len(bundles) == 0 {
		return nil, errors.New("no bundles: the release publishes one per Linux and macOS target")
	}
	doc["version"] = version
	pkgs, _ := doc["packages"].([]any)
	var oci map[string]any
	for _, p := range pkgs {
		if pm, ok := p.(map[string]any); ok && pm["registryType"] == "oci" {
			oci = pm
		}
		if pm, ok := p.(map[string]any); ok && pm["registryType"] == "mcpb" {
			return nil, errors.New("the committed server.json already lists an mcpb package: the release adds them")
		}
	}
	if oci == nil {
		return nil, errors.New("the committed server.json lists no oci package")
	}
	id, _ := oci["identifier"].(string)
	image, _, ok := strings.Cut(id, ":")
	if !ok || strings.Contains(image, "@") {
		return nil, fmt.Errorf("the oci identifier %q is not IMAGE:TAG", id)
	}
	oci["identifier"] = image + ":" + version
	for _, b := range bundles {
		pkgs = append(pkgs, map[string]any{
			"registryType":         "mcpb",
			"identifier":           meta.Repository + "/releases/download/" + url.PathEscape(tag) + "/" + url.PathEscape(b.File),
			"version":              version,
			"fileSha256":           b.SHA256,
			"transport":            map[string]any{"type": "stdio"},
			"environmentVariables": oci["environmentVariables"],
		})
	}
	doc["packages"] = pkgs
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := Validate(out.Bytes(), schema); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Validate checks a server.json as the registry does before it lists it:
// against the registry's JSON schema, then the registry's own rules for
// the package types this project publishes (those of registry v1.5.0,
// internal/validators/registries/mcpb.go and oci.go, less the network
// checks that the file or image exists). Every package must name the
// server's version.
func Validate(serverJSON, schema []byte) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(serverJSON, &doc); err != nil {
		return fmt.Errorf("server.json: %w", err)
	}
	if err := rs.Validate(doc); err != nil {
		return fmt.Errorf("server.json does not match the registry schema: %w", err)
	}
	if got := doc["$schema"]; got != s.ID {
		return fmt.Errorf("server.json names schema %v, not the registry's %s", got, s.ID)
	}
	var sj struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType    string `json:"registryType"`
			Identifier      string `json:"identifier"`
			Version         string `json:"version"`
			FileSHA256      string `json:"fileSha256"`
			RegistryBaseURL string `json:"registryBaseUrl"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(serverJSON, &sj); err != nil {
		return err
	}
	var errs []error
	for i, p := range sj.Packages {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("package %d (%s): %s", i, p.Identifier, fmt.Sprintf(format, args...)))
		}
		if p.RegistryBaseURL != "" {
			bad("registryBaseUrl is refused for %s packages", p.RegistryType)
		}
		switch p.RegistryType {
		case "oci":
			if p.Version != "" || p.FileSHA256 != "" {
				bad("an oci package carries its version in the identifier and has no version or fileSha256")
			}
			if !strings.HasSuffix(p.Identifier, ":"+sj.Version) {
				bad("the image tag is not the server's version %s", sj.Version)
			}
		case "mcpb":
			if !sha256Hex.MatchString(p.FileSHA256) {
				bad("an mcpb package needs its fileSha256 (64 lowercase hex digits)")
			}
			u, err := url.Parse(p.Identifier)
			if err != nil || u.Scheme != "https" || u.Host != "github.com" || !githubAsset.MatchString(u.Path) {
				bad("an mcpb package is an https GitHub release asset, /OWNER/REPO/releases/download/TAG/FILE")
			}
			if !strings.Contains(strings.ToLower(p.Identifier), "mcp") {
				bad("an mcpb package URL must contain \"mcp\"")
			}
			if p.Version != sj.Version {
				bad("version %q is not the server's %s", p.Version, sj.Version)
			}
		default:
			bad("registry type %q is not one this project publishes", p.RegistryType)
		}
	}
	return errors.Join(errs...)
}

var (
	sha256Hex   = regexp.MustCompile(`^[a-f0-9]{64}$`)
	githubAsset = regexp.MustCompile(`^/([a-zA-Z0-9]([a-zA-Z0-9\-]{0,37}[a-zA-Z0-9])?)/([a-zA-Z0-9._\-]+)/releases/download/([^/]+)/([^/]+)$`)
)
