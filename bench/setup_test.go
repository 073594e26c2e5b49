//go:build unix

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeExtension writes an extension folder named name whose manifest runs
// a script, and returns it.
func fakeExtension(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"` + name + `","version":"1.0.0","exec":"./run.sh"}`
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUserFixtureLayout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HomeExts = []string{fakeExtension(t, "one"), fakeExtension(t, "two")}
	cfg.ProjectExts = []string{fakeExtension(t, "three")}
	cfg.MCPBin = script(t, "mcp", "exit 0\n")
	fx, err := makeFixture(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(fx.home, "extensions", "one", "extension.json"),
		filepath.Join(fx.home, "extensions", "two", "run.sh"),
		filepath.Join(fx.cwd, ".zot", "extensions", "three", "run.sh"),
		filepath.Join(fx.cwd, ".zot", "mcp.json"),
		fx.readFile,
	} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if info, err := os.Stat(filepath.Join(fx.cwd, ".zot", "extensions", "three", "run.sh")); err == nil && info.Mode().Perm()&0o100 == 0 {
		t.Errorf("the extension's executable lost its mode: %v", info.Mode())
	}
	sessions, _ := filepath.Glob(filepath.Join(fx.home, "sessions", "*.jsonl"))
	logs, _ := filepath.Glob(filepath.Join(fx.home, "logs", "*.log"))
	if len(sessions) != pastSessions || len(logs) != logFiles {
		t.Errorf("%d sessions and %d logs, want %d and %d", len(sessions), len(logs), pastSessions, logFiles)
	}
	var mcp struct {
		MCPServers map[string]struct {
			Command string `json:"command"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(fx.cwd, ".zot", "mcp.json"))
	if err := json.Unmarshal(b, &mcp); err != nil || !filepath.IsAbs(mcp.MCPServers[mcpServerName].Command) {
		t.Errorf("mcp.json %s: %v", b, err)
	}

	cfg.Setup = SetupBare
	bare, err := makeFixture(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(bare.home); len(entries) != 0 {
		t.Errorf("the bare zot home holds %v", entries)
	}

	cfg.Setup = SetupUser
	cfg.HomeExts = []string{t.TempDir()} // no manifest
	if _, err := makeFixture(t.TempDir(), cfg); err == nil || !strings.Contains(err.Error(), "make bench-build") {
		t.Errorf("a folder without a manifest: %v", err)
	}
}

// goBuild builds pkg into dir/name.
func goBuild(t *testing.T, pkg, out string) {
	t.Helper()
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, b)
	}
}

// builtExtension builds the example extension name with its manifest into
// a fresh folder, as make bench-build does.
func builtExtension(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	goBuild(t, "zot.dev/zot/examples/extensions/"+name, filepath.Join(dir, name))
	if err := copyFile(filepath.Join("..", "examples", "extensions", name, "extension.json"), filepath.Join(dir, "extension.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestUserSetupRunsEverything checks that zot run in the user setup, as
// the harness runs it, loads every extension and the MCP server once the
// project is trusted, and only the zot home's extensions before.
func TestUserSetupRunsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zot, two extensions and an MCP server")
	}
	zot := buildZot(t)
	cfg := DefaultConfig()
	cfg.HomeExts = []string{builtExtension(t, "todo"), filepath.Join("..", "examples", "extensions", "weather")}
	cfg.ProjectExts = []string{builtExtension(t, "hello")}
	cfg.MCPBin = filepath.Join(t.TempDir(), "mcp")
	goBuild(t, "zot.dev/zot/internal/mcphost/testdata/mcpserver", cfg.MCPBin)
	fx, err := makeFixture(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := append(childEnv(), "ZOT_HOME="+fx.home)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	// Untrusted: the home's two extensions, not the project's nor its
	// MCP server.
	exts, mcp := startedIn(t, ctx, zot, fx, env, 2, false)
	if strings.Contains(exts, `"name":"hello"`) || strings.Contains(mcp, `"name":"`+mcpServerName+`"`) {
		t.Errorf("an untrusted project's extension or MCP server ran:\n%s%s", exts, mcp)
	}
	if err := trustProject(ctx, zot, fx.cwd, env); err != nil {
		t.Fatal(err)
	}
	startedIn(t, ctx, zot, fx, env, 3, true)
}

// startedIn runs zot rpc in fx until wantExts extensions are ready, and
// the MCP server too when wantMCP, and returns the last get_extensions
// and mcp_list answers.
func startedIn(t *testing.T, ctx context.Context, zot string, fx fixture, env []string, wantExts int, wantMCP bool) (exts, mcp string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, zot, "rpc", "--provider", "scripted")
	cmd.Dir, cmd.Env = fx.cwd, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(out, 1<<20)
	answer := func(line string) string {
		t.Helper()
		if _, err := in.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		for {
			got, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("after %s: %v", line, err)
			}
			if strings.HasPrefix(got, `{"type":"response"`) {
				return got
			}
		}
	}
	// A prompt waits for the extensions and the MCP servers to start.
	answer(`{"id":"p","type":"prompt","message":"hi"}`)
	deadline := time.Now().Add(time.Minute)
	for {
		exts, mcp = answer(`{"id":"e","type":"get_extensions"}`), answer(`{"id":"m","type":"mcp_list"}`)
		ready := strings.Count(exts, `"state":"ready"`) == wantExts && strings.Contains(mcp, `"status":"ready"`) == wantMCP
		if ready {
			return exts, mcp
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d extensions ready and the MCP server %v:\n%s%s", wantExts, wantMCP, exts, mcp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
