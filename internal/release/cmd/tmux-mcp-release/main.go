// Command tmux-mcp-release makes the release's MCP Bundles and its
// server.json. goreleaser runs `bundle` after building each binary
// (.goreleaser.yaml), the release workflow runs `server-json` after
// goreleaser; both run at the repository root.
//
//	tmux-mcp-release bundle --binary PATH --os OS --arch ARCH --version V --out DIR
//	tmux-mcp-release server-json --dist DIR --version V --tag TAG --out FILE
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/tmux-mcp/tmux-mcp/internal/release"
)

// The committed files it reads, relative to the repository root.
const (
	serverJSONPath = "server.json"
	licensePath    = "LICENSE"
	schemaPath     = "internal/config/testdata/registry/server.schema.json"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tmux-mcp-release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: tmux-mcp-release bundle|server-json [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	version := fs.String("version", "", "the release's version, without a leading v")
	switch args[0] {
	case "bundle":
		binary := fs.String("binary", "", "the built server binary")
		goos := fs.String("os", "", "its GOOS")
		goarch := fs.String("arch", "", "its GOARCH")
		out := fs.String("out", "dist", "where the .mcpb goes")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *binary == "" || *goos == "" || *goarch == "" || *version == "" {
			return errors.New("bundle needs --binary, --os, --arch and --version")
		}
		if !slices.Contains(release.BundlePlatforms, *goos) {
			fmt.Printf("tmux-mcp-release: no bundle for %s/%s (bundles are for %s)\n", *goos, *goarch, strings.Join(release.BundlePlatforms, ", "))
			return nil
		}
		return bundle(ctx, *binary, release.Platform{OS: *goos, Arch: *goarch}, *version, *out)
	case "server-json":
		dist := fs.String("dist", "dist", "where the release's .mcpb files are")
		tag := fs.String("tag", "", "the release's git tag (default v + version)")
		out := fs.String("out", "dist/server.json", "the file to write")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *version == "" {
			return errors.New("server-json needs --version")
		}
		if *tag == "" {
			*tag = "v" + *version
		}
		return serverJSON(*dist, *version, *tag, *out)
	}
	return fmt.Errorf("unknown command %q: bundle or server-json", args[0])
}

func bundle(ctx context.Context, binary string, p release.Platform, version, outDir string) error {
	committed, err := os.ReadFile(serverJSONPath)
	if err != nil {
		return err
	}
	meta, err := release.ReadMeta(committed)
	if err != nil {
		return err
	}
	manifest, err := release.Manifest(meta, version, p)
	if err != nil {
		return err
	}
	mcpb, err := release.FindMCPB(".")
	if err != nil {
		return err
	}
	out := filepath.Join(outDir, release.BundleName(version, p))
	sum, err := release.Pack(ctx, mcpb, manifest, binary, licensePath, out, release.ThirdPartyNotices...)
	if err != nil {
		return err
	}
	fmt.Printf("tmux-mcp-release: %s (sha256 %s), validated and packed by %s\n", out, sum, mcpb)
	return nil
}

func serverJSON(dist, version, tag, out string) error {
	committed, err := os.ReadFile(serverJSONPath)
	if err != nil {
		return err
	}
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dist, "*.mcpb"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var bundles []release.Bundle
	for _, f := range files {
		sum, err := release.FileSHA256(f)
		if err != nil {
			return err
		}
		bundles = append(bundles, release.Bundle{File: filepath.Base(f), SHA256: sum})
	}
	doc, err := release.ServerJSON(committed, version, tag, bundles, schema)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return err
	}
	fmt.Printf("tmux-mcp-release: %s: version %s, the OCI image and %d bundles, valid against %s\n", out, version, len(bundles), schemaPath)
	return nil
}
