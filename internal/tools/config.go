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
	// Sandbox, when set, confines what the tools change: write and edit
	// ask it before writing a file, and bash starts its shell through it
	// (internal/sandbox's Guard). Nil confines nothing.
	Sandbox Sandbox
	// Env is the base environment of bash commands ("NAME=value" entries).
	// Provider credentials are removed from it before use. Nil means
	// os.Environ().
	Env []string
}

// Sandbox confines the tools (internal/sandbox.Guard implements it).
type Sandbox interface {
	// CheckWrite returns nil when the file at path (absolute) may be
	// written, else the error the model reads: which path, which rule,
	// how the user can allow it. grant, when not "", is a permission
	// given for this one write (allowed once): the caller passes it to
	// Beneath for this write and drops it with the call.
	CheckWrite(path string) (grant string, err error)
	// Prepare says how to start prog with args confined: the program
	// and arguments to start (prog and args, or a wrapper's around them)
	// and a function to call on the thread that forks it
	// (subproc.Command.Confine; nil for none); or why the command cannot
	// be confined here.
	Prepare(prog string, args []string) (string, []string, func() error, error)
	// Restricts reports whether anything is confined: bash then runs in
	// zot's own shell, never in a client's terminal.
	Restricts() bool
	// Explain says what is confined and how the user can allow it; bash
	// adds it to the result of a command that failed.
	Explain() string
	// Describe says, for the model, what commands may do under the
	// policy in force; bash's description ends with it. It changes only
	// when the policy does.
	Describe() string
	// Beneath says where to make a write of path that CheckWrite
	// allowed: the folder root and path's real location relative to it,
	// which write and edit resolve beneath root and nowhere else, so that
	// a symbolic link swapped in since the check cannot lead the write
	// out; own when the file was allowed by itself (then it may be
	// written in place, hard links and all). root is "" when writes are
	// not confined; err, the error the model reads, when path leads
	// elsewhere than the check saw. grant is CheckWrite's for this write.
	Beneath(path, grant string) (root, rel string, own bool, err error)
}

// writeFile puts data in the file at abs (writeFile's rules), beneath the
// writable folder the sandbox names when it confines writes; grant is
// what checkWrite returned for this write.
func (c Config) writeFile(abs string, data []byte, grant string) (writeOutcome, error) {
	if c.Sandbox == nil {
		return writeFile(abs, data)
	}
	root, rel, own, err := c.Sandbox.Beneath(abs, grant)
	if err == nil && root == "" {
		return writeFile(abs, data)
	}
	// The checks on the path as given (a dangling link, a folder, a
	// device) say what is wrong in the usual words.
	if _, _, err := writeTarget(abs); err != nil {
		return writeOutcome{}, err
	}
	if err != nil {
		return writeOutcome{}, err
	}
	return writeBeneath(root, rel, data, own)
}

// checkWrite asks the sandbox about a write of abs: denied, with the
// tool's result, when it refuses; else the grant (Sandbox.CheckWrite)
// to hand to writeFile for this write.
func (c Config) checkWrite(abs string) (grant string, _ Result, denied bool) {
	if c.Sandbox == nil {
		return "", Result{}, false
	}
	grant, err := c.Sandbox.CheckWrite(abs)
	if err != nil {
		return "", Errorf(err.Error()), true
	}
	return grant, Result{}, false
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
