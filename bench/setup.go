package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The setups a run measures the binaries in.
const (
	// SetupUser runs every binary as a user's zot runs: a zot home with
	// extensions installed, logs and past sessions, and a project folder
	// (the working directory) whose .zot holds an extension and an MCP
	// configuration.
	SetupUser = "user"
	// SetupBare runs every binary in an empty zot home and an empty
	// working directory.
	SetupBare = "bare"
)

// The user setup's contents.
const (
	// mcpServerName names the project's MCP server.
	mcpServerName = "bench"
	// pastSessions is how many session files the zot home holds, each of
	// sessionMessages messages, and logFiles how many log files.
	pastSessions    = 40
	sessionMessages = 60
	logFiles        = 8
	logFileBytes    = 64 << 10
	// readFileName is the project file the read round trip reads, of
	// readFileLines lines.
	readFileName  = "notes.txt"
	readFileLines = 120
	// readFileLine starts each line of the file with its number;
	// readFileHead is how the first starts.
	readFileLine = "line %03d"
	readFileHead = "line 001"
)

// fixture is where the children run: their working directory, their zot
// home, and the file the read round trip reads.
type fixture struct {
	cwd, home, readFile string
}

// makeFixture lays out the setup of cfg under dir. The bare setup is an
// empty zot home and an empty working directory; the user setup adds
// extensions (copies of the folders of cfg.HomeExts and cfg.ProjectExts)
// in the home and the project, the project's .zot/mcp.json naming
// cfg.MCPBin, logs and past sessions in the home.
func makeFixture(dir string, cfg Config) (fixture, error) {
	fx := fixture{cwd: filepath.Join(dir, "project"), home: filepath.Join(dir, "home")}
	for _, d := range []string{fx.cwd, fx.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fixture{}, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	fx.readFile = filepath.Join(fx.cwd, readFileName)
	if err := writeReadFile(fx.readFile); err != nil {
		return fixture{}, err
	}
	if cfg.Setup != SetupUser {
		return fx, nil
	}
	for _, src := range cfg.HomeExts {
		if err := installExtension(src, filepath.Join(fx.home, "extensions")); err != nil {
			return fixture{}, err
		}
	}
	for _, src := range cfg.ProjectExts {
		if err := installExtension(src, filepath.Join(fx.cwd, ".zot", "extensions")); err != nil {
			return fixture{}, err
		}
	}
	mcpBin, err := filepath.Abs(cfg.MCPBin)
	if err != nil {
		return fixture{}, fmt.Errorf("locating the MCP server: %w", err)
	}
	if _, err := os.Stat(mcpBin); err != nil {
		return fixture{}, fmt.Errorf("the MCP server of the user setup (--mcp-bin; make bench-build builds it): %w", err)
	}
	mcpConfig, err := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{mcpServerName: map[string]any{"command": mcpBin, "args": []string{"-name", mcpServerName}}},
	}, "", "  ")
	if err != nil {
		return fixture{}, fmt.Errorf("encoding the MCP configuration: %w", err)
	}
	if err := os.WriteFile(filepath.Join(fx.cwd, ".zot", "mcp.json"), mcpConfig, 0o600); err != nil {
		return fixture{}, fmt.Errorf("writing the MCP configuration: %w", err)
	}
	if err := writeLogs(filepath.Join(fx.home, "logs")); err != nil {
		return fixture{}, err
	}
	if err := writeSessions(filepath.Join(fx.home, "sessions"), fx.cwd); err != nil {
		return fixture{}, err
	}
	return fx, nil
}

// writeReadFile writes the file the read round trip reads: lines of text
// as a source file has them.
func writeReadFile(path string) error {
	var sb strings.Builder
	for i := range readFileLines {
		fmt.Fprintf(&sb, readFileLine+": the quick brown fox jumps over the lazy dog, and then some more words.\n", i+1)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		return fmt.Errorf("writing the file to read: %w", err)
	}
	return nil
}

// installExtension copies the extension folder src (its manifest and what
// it runs) into parent, as `zot ext install` leaves it.
func installExtension(src, parent string) error {
	if _, err := os.Stat(filepath.Join(src, "extension.json")); err != nil {
		return fmt.Errorf("an extension of the user setup (--home-ext, --project-ext; make bench-build builds them): %w", err)
	}
	dst := filepath.Join(parent, filepath.Base(filepath.Clean(src)))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, info.Mode().Perm())
	})
	if err != nil {
		return fmt.Errorf("installing the extension %s: %w", src, err)
	}
	return nil
}

// writeLogs fills dir with log files as extensions and MCP servers leave
// them.
func writeLogs(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	line := strings.Repeat("2026-11-20T10:00:00Z some line an extension wrote on its stderr\n", logFileBytes/64)
	for i := range logFiles {
		path := filepath.Join(dir, fmt.Sprintf("ext-old-%d.log", i))
		if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// writeSessions fills dir with past sessions of the project cwd, in the
// session file format (a header line, then one message a line).
func writeSessions(dir, cwd string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := range pastSessions {
		created := start.Add(time.Duration(i) * time.Hour)
		var sb strings.Builder
		head, err := json.Marshal(map[string]any{"session": map[string]any{"version": 1, "cwd": cwd, "created": created.Format(time.RFC3339)}})
		if err != nil {
			return fmt.Errorf("encoding a session header: %w", err)
		}
		sb.Write(head)
		sb.WriteByte('\n')
		for m := range sessionMessages {
			role := "user"
			if m%2 == 1 {
				role = "assistant"
			}
			msg, err := json.Marshal(map[string]any{
				"role": role, "time": created.Add(time.Duration(m) * time.Second).Format("2006-01-02T15:04:05.000Z"),
				"content": []map[string]string{{"type": "text", "text": fmt.Sprintf("message %d of a past session: %s", m, strings.Repeat("words ", 40))}},
			})
			if err != nil {
				return fmt.Errorf("encoding a session message: %w", err)
			}
			sb.Write(msg)
			sb.WriteByte('\n')
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%016x.jsonl", created.Format("20060102T150405Z"), i+1))
		if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// copyFile copies src to dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
