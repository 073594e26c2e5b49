// Package home says where zot keeps its files: the auth file, session
// files, logs, extensions, the MCP configuration and the daemon's socket
// all live under one directory, resolved the same way by every part of
// zot.
//
// The directory is $ZOT_HOME when set. Otherwise it is the platform's
// place for an application's state: $XDG_STATE_HOME/zot (else
// ~/.local/state/zot) on Linux and other Unix systems, ~/Library/
// Application Support/zot on macOS, %LocalAppData%\zot on Windows. A
// ~/.zot directory, the place earlier versions used, is still used when it
// exists and the new default does not.
package home

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Env is what resolving the directory reads from the process: its
// environment, the user's home directory, the operating system, and
// whether a directory exists. Tests give their own.
type Env struct {
	Getenv  func(string) string
	UserDir func() (string, error)
	GOOS    string
	IsDir   func(path string) bool
}

// OS is the Env of the running process.
func OS() Env {
	return Env{Getenv: os.Getenv, UserDir: os.UserHomeDir, GOOS: goos, IsDir: isDir}
}

// Home is a resolved zot home directory.
type Home struct {
	// Dir is the directory.
	Dir string
	// Legacy is set when Dir is the old ~/.zot, kept because it exists and
	// the new default does not.
	Legacy bool
	// Default is the directory zot would use without the legacy one.
	Default string
}

// Resolve works out the home directory from env. It fails only when
// neither $ZOT_HOME nor the user's home directory is known.
func Resolve(env Env) (Home, error) {
	if d := env.Getenv("ZOT_HOME"); d != "" {
		return Home{Dir: d, Default: d}, nil
	}
	user, err := env.UserDir()
	if err != nil || user == "" {
		return Home{}, fmt.Errorf("zot home: set ZOT_HOME (the user's home directory is unknown: %v)", err)
	}
	def := defaultDir(env, user)
	legacy := filepath.Join(user, ".zot")
	if !env.IsDir(def) && env.IsDir(legacy) {
		return Home{Dir: legacy, Legacy: true, Default: def}, nil
	}
	return Home{Dir: def, Default: def}, nil
}

// defaultDir is the platform's state directory for zot.
func defaultDir(env Env, user string) string {
	switch env.GOOS {
	case "darwin", "ios":
		return filepath.Join(user, "Library", "Application Support", "zot")
	case "windows":
		if d := env.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "zot")
		}
		return filepath.Join(user, "AppData", "Local", "zot")
	}
	if d := env.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "zot")
	}
	return filepath.Join(user, ".local", "state", "zot")
}

// Notice is the line to tell the user once when the legacy directory is
// in use, or "".
func (h Home) Notice() string {
	if !h.Legacy {
		return ""
	}
	return fmt.Sprintf("zot: using %s; move it to %s (or set ZOT_HOME) to silence this", h.Dir, h.Default)
}

// AuthFile is the file of provider credentials.
func (h Home) AuthFile() string { return filepath.Join(h.Dir, "auth.json") }

// Sessions is the folder of session files.
func (h Home) Sessions() string { return filepath.Join(h.Dir, "sessions") }

// Logs is the folder of log files (an extension's stderr, say).
func (h Home) Logs() string { return filepath.Join(h.Dir, "logs") }

// Extensions is the folder of the user's extensions.
func (h Home) Extensions() string { return filepath.Join(h.Dir, "extensions") }

// Agents is the folder of the user's agent profiles (docs/agents.md).
func (h Home) Agents() string { return filepath.Join(h.Dir, "agents") }

// MCPConfig is the user's MCP server configuration file.
func (h Home) MCPConfig() string { return filepath.Join(h.Dir, "mcp.json") }

// ModelsCache is the file `zot models --refresh` writes: the models each
// provider's models endpoint listed.
func (h Home) ModelsCache() string { return filepath.Join(h.Dir, "models-cache.json") }

// TrustFile is the file of the project folders the user trusts to run
// their own extensions and MCP servers (zot trust).
func (h Home) TrustFile() string { return filepath.Join(h.Dir, "trust.json") }

// Socket is the daemon's default socket.
func (h Home) Socket() string { return filepath.Join(h.Dir, "daemon.sock") }

var (
	once   sync.Once
	cached Home
	err    error
)

// Current resolves the home directory of this process once and returns it
// every time after.
func Current() (Home, error) {
	once.Do(func() { cached, err = Resolve(OS()) })
	return cached, err
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// Skills is the folder of the user's skills (docs/skills.md).
func (h Home) Skills() string { return filepath.Join(h.Dir, "skills") }

// SystemPrompt is the file whose text replaces zot's default system
// prompt when no --system-prompt is given (docs/skills.md).
func (h Home) SystemPrompt() string { return filepath.Join(h.Dir, "SYSTEM.md") }
