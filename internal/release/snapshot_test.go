package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"debug/elf"
	"debug/macho"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// What a release's archives carry besides the binary.
var archiveExtras = []string{"LICENSE", "README.md", "CHANGELOG.md", "tmux-mcp.1",
	"completions/tmux-mcp.bash", "completions/_tmux-mcp", "completions/tmux-mcp.fish",
	"third_party/GO-FONTS-LICENSE"}

// The output of a snapshot release (scripts/release-snapshot.sh runs
// goreleaser, then this test with TMUX_MCP_RELEASE_SNAPSHOT=dist): every
// archive with the binary, the man page and the completions; a bundle per
// Linux and macOS target holding that target's binary; checksums of all of
// them; the Homebrew cask; a server.json naming each bundle by its hash.
// CI does not build goreleaser (minutes), so it skips this test.
func TestReleaseSnapshot(t *testing.T) {
	rel := os.Getenv("TMUX_MCP_RELEASE_SNAPSHOT")
	if rel == "" {
		t.Skip("checks a snapshot release: scripts/release-snapshot.sh runs it")
	}
	dist := filepath.Join(root, rel)
	var md struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(readAbs(t, filepath.Join(dist, "metadata.json")), &md); err != nil || md.Version == "" {
		t.Fatalf("metadata.json: %v %+v", err, md)
	}
	v := md.Version
	sums := map[string]string{}
	f, err := os.Open(filepath.Join(dist, "tmux-mcp_"+v+"_checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			sums[name] = sum
		}
	}
	f.Close()
	checksummed := func(name string) {
		t.Helper()
		got, err := FileSHA256(filepath.Join(dist, name))
		if err != nil {
			t.Error(err)
		} else if sums[name] != got {
			t.Errorf("%s: checksums file says %q, the file is %s", name, sums[name], got)
		}
	}

	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			name := "tmux-mcp_" + v + "_" + goos + "_" + arch
			bin := "tmux-mcp"
			var files map[string][]byte
			if goos == "windows" {
				name += ".zip"
				bin += ".exe"
				files = unzip(t, filepath.Join(dist, name))
			} else {
				name += ".tar.gz"
				files = untar(t, filepath.Join(dist, name))
			}
			checksummed(name)
			for _, want := range append([]string{bin}, archiveExtras...) {
				if _, ok := files[want]; !ok {
					t.Errorf("%s lacks %s", name, want)
				}
			}
			if man := string(files["tmux-mcp.1"]); !strings.Contains(man, `.TH TMUX\-MCP 1 "" "tmux\-mcp v`+strings.ReplaceAll(v, "-", `\-`)+`"`) {
				t.Errorf("%s: the man page does not carry version %s:\n%.400s", name, v, man)
			}
			checkBinary(t, name, files[bin], goos, arch)

			bundle := BundleName(v, Platform{goos, arch})
			if _, err := os.Stat(filepath.Join(dist, bundle)); goos == "windows" {
				if err == nil {
					t.Errorf("%s was made: bundles are for Linux and macOS", bundle)
				}
				continue
			} else if err != nil {
				t.Error(err)
				continue
			}
			checksummed(bundle)
			inside := unzip(t, filepath.Join(dist, bundle))
			var m decoded
			if err := json.Unmarshal(inside["manifest.json"], &m); err != nil {
				t.Errorf("%s: manifest: %v", bundle, err)
			}
			if m.Version != v || !slices.Equal(m.Compatibility.Platforms, []string{goos}) {
				t.Errorf("%s: version %q, platforms %v", bundle, m.Version, m.Compatibility.Platforms)
			}
			checkBinary(t, bundle, inside[BinaryPath], goos, arch)
		}
	}

	cask := string(readAbs(t, filepath.Join(dist, "homebrew", "Casks", "tmux-mcp.rb")))
	for _, want := range []string{
		`cask "tmux-mcp"`, `version "` + v + `"`, `binary "tmux-mcp"`, `manpage "tmux-mcp.1"`,
		`bash_completion "completions/tmux-mcp.bash"`, `zsh_completion "completions/_tmux-mcp"`, `fish_completion "completions/tmux-mcp.fish"`,
		"com.apple.quarantine", "on_macos do", "on_linux do",
	} {
		if !strings.Contains(cask, want) {
			t.Errorf("the cask lacks %q:\n%s", want, cask)
		}
	}
	if !regexp.MustCompile(`depends_on formula: \[\s*"tmux",?\s*\]`).MatchString(cask) {
		t.Errorf("the cask does not depend on tmux:\n%s", cask)
	}
	for _, goos := range []string{"darwin", "linux"} {
		for _, arch := range []string{"amd64", "arm64"} {
			archive := "tmux-mcp_" + v + "_" + goos + "_" + arch + ".tar.gz"
			url := regexp.MustCompile(`url "https://github.com/tmux-mcp/tmux-mcp/releases/download/v[^/"]+/tmux-mcp_#\{version\}_` + goos + "_" + arch + `\.tar\.gz"\s+sha256 "` + sums[archive] + `"`)
			if !url.MatchString(cask) {
				t.Errorf("the cask lacks the url and sha256 of %s:\n%s", archive, cask)
			}
		}
	}

	doc := readAbs(t, filepath.Join(dist, "server.json"))
	if err := Validate(doc, readFile(t, "internal/config/testdata/registry/server.schema.json")); err != nil {
		t.Error(err)
	}
	var sj struct {
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			FileSHA256   string `json:"fileSha256"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(doc, &sj); err != nil {
		t.Fatal(err)
	}
	bundles := 0
	for _, p := range sj.Packages {
		if p.RegistryType == "mcpb" {
			bundles++
			if name := p.Identifier[strings.LastIndex(p.Identifier, "/")+1:]; sums[name] != p.FileSHA256 {
				t.Errorf("server.json: %s has fileSha256 %s, the checksums file %s", name, p.FileSHA256, sums[name])
			}
		}
	}
	if bundles != 4 {
		t.Errorf("server.json names %d bundles, want 4", bundles)
	}
}

// checkBinary checks that b is an executable for goos/goarch.
func checkBinary(t *testing.T, where string, b []byte, goos, arch string) {
	t.Helper()
	r := strings.NewReader(string(b))
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			t.Errorf("%s: not ELF: %v", where, err)
			return
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		if f.Machine != want {
			t.Errorf("%s: ELF for %v, want %v", where, f.Machine, want)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			t.Errorf("%s: not Mach-O: %v", where, err)
			return
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]
		if f.Cpu != want {
			t.Errorf("%s: Mach-O for %v, want %v", where, f.Cpu, want)
		}
	default:
		if !strings.HasPrefix(string(b), "MZ") {
			t.Errorf("%s: not a Windows executable", where)
		}
	}
}

func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
}

func unzip(t *testing.T, path string) map[string][]byte {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, zf := range z.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[zf.Name] = b
	}
	return files
}
