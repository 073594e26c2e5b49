package wsserve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Principal is who a client authenticated as: the name its token has in
// the token file, and whether that token grants admin (every principal's
// sessions).
type Principal struct {
	Name  string
	Admin bool
}

// MinTokenBytes is the shortest token the token file accepts.
const MinTokenBytes = 16

// Tokens are the principals of a token file and their tokens, kept as
// SHA-256 sums: a presented token is hashed and compared with every sum
// in constant time. Safe for concurrent use; Reload replaces them.
type Tokens struct {
	path string

	mu      sync.RWMutex
	entries []tokenEntry
}

type tokenEntry struct {
	sum       [sha256.Size]byte
	principal Principal
}

// LoadTokens reads the token file at path: one principal a line, `NAME
// TOKEN` or `NAME TOKEN admin`, blank lines and lines starting with `#`
// ignored. The file must be a regular file of the daemon's user that no
// one else may read or write (mode 0600 or 0400, as ssh asks of a private
// key); a name is letters, digits, '.', '_' and '-'; a token is at least
// MinTokenBytes of letters, digits and "-._~" (base64url or hex: what
// fits in a WebSocket subprotocol and a header); names and tokens are unique.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Path returns the file the tokens come from.
func (t *Tokens) Path() string { return t.path }

// Len returns how many principals the file names.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// Reload reads the file again. On an error the tokens in use stay as
// they were.
func (t *Tokens) Reload() error {
	entries, err := readTokens(t.path)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.entries = entries
	t.mu.Unlock()
	return nil
}

// Lookup returns the principal whose token is token. Every sum is
// compared, whatever matched, so the time taken says nothing about
// which one did or how much of it.
func (t *Tokens) Lookup(token string) (Principal, bool) {
	sum := sha256.Sum256([]byte(token))
	t.mu.RLock()
	defer t.mu.RUnlock()
	found := -1
	for i := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], t.entries[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 || token == "" {
		return Principal{}, false
	}
	return t.entries[found].principal, true
}

// readTokens checks the file's mode and owner and parses it.
func readTokens(path string) ([]tokenEntry, error) {
	// O_NONBLOCK: a named pipe is opened at once (and refused below as no
	// regular file) instead of waiting for a writer, at start or on SIGHUP.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the token file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("the token file %s: %w", path, err)
	}
	if err := checkPrivate(path, st); err != nil {
		return nil, err
	}
	data, err := readAll(f, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("reading the token file %s: %w", path, err)
	}
	var (
		entries []tokenEntry
		names   = map[string]int{}
		sums    = map[[sha256.Size]byte]int{}
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || len(fields) > 3 || (len(fields) == 3 && fields[2] != "admin") {
			return nil, fmt.Errorf("%s:%d: want NAME TOKEN or NAME TOKEN admin", path, n)
		}
		name, token := fields[0], fields[1]
		if !validName(name) {
			return nil, fmt.Errorf("%s:%d: the name %q is not letters, digits, '.', '_' and '-' (at most 64)", path, n, name)
		}
		if err := validToken(token); err != nil {
			return nil, fmt.Errorf("%s:%d: the token of %s %v", path, n, name, err)
		}
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s was named already on line %d", path, n, name, prev)
		}
		sum := sha256.Sum256([]byte(token))
		if prev, dup := sums[sum]; dup {
			return nil, fmt.Errorf("%s:%d: the token of %s is the token of line %d; each principal needs its own", path, n, name, prev)
		}
		names[name], sums[sum] = n, n
		entries = append(entries, tokenEntry{sum: sum, principal: Principal{Name: name, Admin: len(fields) == 3}})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the token file %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("the token file %s names no principal (one line each: NAME TOKEN [admin])", path)
	}
	return entries, nil
}

// checkPrivate refuses a token file that is not a regular file of this
// user, or that others may read or write.
func checkPrivate(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("the token file %s is not a regular file", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("the token file %s belongs to uid %d, not to the daemon's user (uid %d)", path, sys.Uid, os.Getuid())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("the token file %s may be read or written by others (mode %04o): chmod 600 %s", path, perm, path)
	}
	return nil
}

func readAll(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New("it is longer than 1 MiB")
	}
	return data, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

func validToken(s string) error {
	if len(s) < MinTokenBytes {
		return fmt.Errorf("is shorter than %d bytes", MinTokenBytes)
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("-._~", r):
		default:
			return fmt.Errorf("holds %q: use letters, digits and -._~ (base64url, hex)", r)
		}
	}
	return nil
}
