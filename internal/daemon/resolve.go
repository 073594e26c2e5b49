package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"zot.dev/zot/internal/home"
)

// Socket is a resolved endpoint path.
type Socket struct {
	// Path is where the daemon listens.
	Path string
	// Fallback is set when Path replaces Wanted, which is too long for a
	// socket address.
	Fallback bool
	// Wanted is the default path, <ZOT_HOME>/daemon.sock.
	Wanted string
}

// Env is what ResolveSocket reads from the process; nil means the
// process's own.
type Env struct {
	Getenv  func(string) string
	Home    func() (home.Home, error)
	TempDir func() string
	UID     int
}

func osEnv() *Env {
	return &Env{Getenv: os.Getenv, Home: home.Current, TempDir: os.TempDir, UID: os.Getuid()}
}

// ResolveSocket works out the daemon's endpoint: $ZOT_SOCKET when set
// (used as given: too long is an error), else <ZOT_HOME>/daemon.sock, or,
// when that is longer than a socket address holds, a short per-user path:
// $XDG_RUNTIME_DIR/zot/<hash>.sock, else <tmp>/zot-<uid>/<hash>.sock,
// where hash names the zot home so each home has its own endpoint.
func ResolveSocket(env *Env) (Socket, error) {
	if env == nil {
		env = osEnv()
	}
	if p := env.Getenv("ZOT_SOCKET"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Socket{}, fmt.Errorf("zot daemon: ZOT_SOCKET: %w", err)
		}
		if err := fits(abs); err != nil {
			return Socket{}, fmt.Errorf("zot daemon: ZOT_SOCKET: %w", err)
		}
		return Socket{Path: abs, Wanted: abs}, nil
	}
	h, err := env.Home()
	if err != nil {
		return Socket{}, fmt.Errorf("zot daemon: %w", err)
	}
	wanted, err := filepath.Abs(h.Socket())
	if err != nil {
		return Socket{}, fmt.Errorf("zot daemon: %w", err)
	}
	if fits(wanted) == nil {
		return Socket{Path: wanted, Wanted: wanted}, nil
	}
	sum := sha256.Sum256([]byte(filepath.Clean(filepath.Dir(wanted))))
	name := hex.EncodeToString(sum[:6]) + ".sock"
	var short string
	if d := env.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		short = filepath.Join(d, "zot", name)
	} else {
		short = filepath.Join(env.TempDir(), "zot-"+strconv.Itoa(env.UID), name)
	}
	if err := fits(short); err != nil {
		return Socket{}, fmt.Errorf("zot daemon: %s is too long for a socket address, and so is the fallback %s: set ZOT_SOCKET to a shorter path", wanted, short)
	}
	return Socket{Path: short, Fallback: true, Wanted: wanted}, nil
}

// fits says whether path fits in a socket address (sun_path, with its
// terminating NUL).
func fits(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("%s is %d bytes, longer than a socket address holds (%d)", path, len(path), maxSocketPath)
	}
	return nil
}
