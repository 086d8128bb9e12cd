package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// MCPBDir is where `npm ci --prefix scripts/mcpb` installs the official
// bundle CLI, @anthropic-ai/mcpb, at the version its lockfile pins.
const MCPBDir = "scripts/mcpb"

// ThirdPartyNotices are the licence files, relative to the repository's
// root, of code the binary embeds whose licence asks binary distributions
// to reproduce its notice (the Go fonts capture_pane_image draws with). The
// archives (.goreleaser.yaml) and the bundles carry them under third_party/.
var ThirdPartyNotices = []string{"docs/third_party/GO-FONTS-LICENSE"}

// ErrNoMCPB is returned when the official CLI is nowhere to be found.
var ErrNoMCPB = errors.New("the official mcpb CLI is not installed: run `npm ci --prefix " + MCPBDir + "`")

// FindMCPB returns the official bundle CLI: $MCPB if set, else the one
// installed under root/scripts/mcpb, else mcpb on PATH.
func FindMCPB(root string) (string, error) {
	if p := os.Getenv("MCPB"); p != "" {
		return p, nil
	}
	local := filepath.Join(root, MCPBDir, "node_modules", ".bin", "mcpb")
	if _, err := os.Stat(local); err == nil {
		return local, nil
	}
	if p, err := exec.LookPath("mcpb"); err == nil {
		return p, nil
	}
	return "", ErrNoMCPB
}

// Pack stages a bundle (manifest.json, the binary at BinaryPath, the
// licence, and the notices of third-party code linked into the binary
// under third_party/, which their licences ask a binary distribution to
// carry) in a temporary directory, has the official CLI validate the
// manifest and pack the directory into out, and returns out's SHA-256.
func Pack(ctx context.Context, mcpb string, manifest []byte, binary, license, out string, notices ...string) (string, error) {
	stage, err := os.MkdirTemp("", "tmux-mcp-bundle-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := os.WriteFile(filepath.Join(stage, "manifest.json"), manifest, 0o644); err != nil {
		return "", err
	}
	if err := copyFile(binary, filepath.Join(stage, filepath.FromSlash(BinaryPath)), 0o755); err != nil {
		return "", err
	}
	if err := copyFile(license, filepath.Join(stage, "LICENSE"), 0o644); err != nil {
		return "", err
	}
	for _, n := range notices {
		if err := os.MkdirAll(filepath.Join(stage, "third_party"), 0o755); err != nil {
			return "", err
		}
		if err := copyFile(n, filepath.Join(stage, "third_party", filepath.Base(n)), 0o644); err != nil {
			return "", err
		}
	}
	if err := runMCPB(ctx, mcpb, "validate", filepath.Join(stage, "manifest.json")); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	_ = os.Remove(abs) // pack refuses nothing, but a stale file must not survive a failed pack
	if err := runMCPB(ctx, mcpb, "pack", stage, abs); err != nil {
		return "", err
	}
	return FileSHA256(abs)
}

// runMCPB runs one mcpb command, its output kept for the error.
func runMCPB(ctx context.Context, mcpb string, args ...string) error {
	cmd := exec.CommandContext(ctx, mcpb, args...)
	cmd.Stdin = nil // pack would otherwise be free to ask
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mcpb %s: %w\n%s", args[0], err, out.Bytes())
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of a file, as server.json's fileSha256
// carries it.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(from, to string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, mode) // the umask may have narrowed it
}
