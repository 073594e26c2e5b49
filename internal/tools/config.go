package tools

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config configures the built-in tools.
type Config struct {
	// CWD is the working directory: relative paths given to the tools are
	// resolved against it and bash runs in it. Empty means the process's
	// working directory at construction.
	CWD string
	// BashTimeout is the default time limit of one bash call; the model may
	// override it per call. Zero means 120 s.
	BashTimeout time.Duration
	// Spills keeps the files where bash saves the full output of a call
	// whose output was truncated, until the caller closes it. Nil means
	// files in SpillDir that nothing removes.
	Spills *Spills
	// SpillDir is where bash writes its spill files when Spills is nil.
	// Empty means os.TempDir().
	SpillDir string
	// MaxImageBytes caps the size of an image file that read returns as an
	// image. Zero means 5 MiB.
	MaxImageBytes int
	// Env is the base environment of bash commands ("NAME=value" entries).
	// Provider credentials are removed from it before use. Nil means
	// os.Environ().
	Env []string
}

// Defaults used when a Config field is zero.
const (
	DefaultBashTimeout   = 120 * time.Second
	DefaultMaxImageBytes = 5 << 20
)

// withDefaults returns c with every zero field replaced by its default and
// CWD made absolute.
func (c Config) withDefaults() Config {
	if c.CWD == "" {
		if wd, err := os.Getwd(); err == nil {
			c.CWD = wd
		} else {
			c.CWD = "."
		}
	}
	if abs, err := filepath.Abs(c.CWD); err == nil {
		c.CWD = abs
	}
	if c.BashTimeout <= 0 {
		c.BashTimeout = DefaultBashTimeout
	}
	if c.SpillDir == "" {
		c.SpillDir = os.TempDir()
	}
	if c.MaxImageBytes <= 0 {
		c.MaxImageBytes = DefaultMaxImageBytes
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	return c
}

// Builtins returns zot's built-in tools configured by cfg, in the order
// read, write, edit, bash, grep, find, ls.
func Builtins(cfg Config) []Tool {
	c := cfg.withDefaults()
	return []Tool{
		&readTool{cfg: c},
		&writeTool{cfg: c},
		&editTool{cfg: c},
		&bashTool{cfg: c},
		&grepTool{cfg: c},
		&findTool{cfg: c},
		&lsTool{cfg: c},
	}
}

// ResolvePath is the absolute, cleaned path the file tools make of a path
// the model gives: "~" and "~/..." are the home directory, a relative
// path is joined to cwd.
func ResolvePath(cwd, p string) string { return resolvePath(cwd, p) }

// resolvePath turns a path given by the model into an absolute, cleaned
// path: "~" and "~/..." expand to the home directory, relative paths are
// joined to cwd.
func resolvePath(cwd, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// displayPath shows abs relative to cwd when it lies inside cwd, else as
// given, always with forward slashes.
func displayPath(cwd, abs string) string {
	if rel, err := filepath.Rel(cwd, abs); err == nil && rel != ".." &&
		!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(abs)
}
