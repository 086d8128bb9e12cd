package config

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The server.json published to the official MCP registry is valid against
// the registry's own schema (testdata/registry, source named in SOURCE.md),
// lists exactly the TMUX_MCP_* variables this package reads, and names the
// same version in its package as at its top.
func TestServerJSONMatchesRegistrySchema(t *testing.T) {
	schemaBytes, err := os.ReadFile("testdata/registry/server.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(schemaBytes, &schema); err != nil {
		t.Fatal(err)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the registry schema: %v", err)
	}
	raw, err := os.ReadFile("../../server.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(doc); err != nil {
		t.Errorf("server.json is invalid: %v", err)
	}
	if got, want := doc["$schema"], schema.ID; got != want {
		t.Errorf("server.json $schema %q, want the committed schema's $id %q", got, want)
	}

	// The validator really checks: documents the registry refuses fail.
	for name, mutate := range map[string]func(map[string]any){
		"name without a namespace": func(d map[string]any) { d["name"] = "tmux-mcp" },
		"description too long":     func(d map[string]any) { d["description"] = strings.Repeat("x", 101) },
		"no version":               func(d map[string]any) { delete(d, "version") },
		"unknown transport": func(d map[string]any) {
			d["packages"].([]any)[0].(map[string]any)["transport"] = map[string]any{"type": "carrier-pigeon"}
		},
		"bad input format": func(d map[string]any) {
			pkg := d["packages"].([]any)[0].(map[string]any)
			pkg["environmentVariables"].([]any)[0].(map[string]any)["format"] = "path"
		},
	} {
		var bad map[string]any
		_ = json.Unmarshal(raw, &bad)
		mutate(bad)
		if err := rs.Validate(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	var sj struct {
		Version  string `json:"version"`
		Packages []struct {
			Identifier string `json:"identifier"`
			Env        []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"environmentVariables"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(raw, &sj); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, st := range Settings {
		if !st.HTTP { // registries launch the stdio server
			ours = append(ours, st.Env)
		}
	}
	for _, p := range sj.Packages {
		if !strings.HasSuffix(p.Identifier, ":"+sj.Version) {
			t.Errorf("package %s does not carry version %s", p.Identifier, sj.Version)
		}
		var names []string
		for _, e := range p.Env {
			names = append(names, e.Name)
			if e.Description == "" {
				t.Errorf("%s has no description", e.Name)
			}
		}
		if !slices.Equal(names, ours) {
			t.Errorf("package %s lists %v, config.Settings reads %v", p.Identifier, names, ours)
		}
	}
}
