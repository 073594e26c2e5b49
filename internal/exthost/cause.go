package exthost

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// LikelyCause names what most likely keeps the extension of s from
// starting, judged from its manifest and its folder alone, or returns ""
// when nothing is wrong there: its runtime not on PATH, its program
// missing, a file its arguments name missing from its folder (the
// extension runs in its own folder, so `index.js` means the one beside
// extension.json), or a `go run` outside any Go module.
func LikelyCause(s Spec) string {
	m := s.Manifest
	if !strings.ContainsRune(m.Exec, '/') && !filepath.IsAbs(m.Exec) {
		if _, err := exec.LookPath(m.Exec); err != nil {
			return fmt.Sprintf("its runtime %q is not on PATH (install it, or fix \"exec\" in %s)", m.Exec, s.File)
		}
	} else if _, err := os.Stat(s.Exec); err != nil {
		return fmt.Sprintf("its program %s does not exist (\"exec\" is relative to the extension's folder %s)", m.Exec, s.Dir)
	}
	for _, a := range m.Args {
		if !looksLikeFile(a) {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("%s is missing from the extension's folder %s (extensions run in their own folder)", a, s.Dir)
		}
	}
	if filepath.Base(m.Exec) == "go" && len(m.Args) > 0 && m.Args[0] == "run" && !inGoModule(s.Dir) {
		return fmt.Sprintf("`go run` needs a go.mod in the extension's folder %s or above it", s.Dir)
	}
	return ""
}

// scriptExts are the endings of the files interpreters are given to run.
var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".py", ".rb", ".pl", ".php", ".lua", ".sh", ".bash", ".jar", ".go"}

// looksLikeFile reports whether a program argument names a file to run:
// a relative path (./x, ../x) or a name with a script's ending.
func looksLikeFile(a string) bool {
	if strings.HasPrefix(a, "-") || a == "." || a == ".." || strings.ContainsAny(a, " \t\n;|&") {
		return false
	}
	if strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
		return true
	}
	for _, ext := range scriptExts {
		if strings.HasSuffix(a, ext) && len(a) > len(ext) && !strings.ContainsAny(a, "=:") {
			return true
		}
	}
	return false
}

// inGoModule reports whether dir or a folder above it holds a go.mod.
func inGoModule(dir string) bool {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// tailBytes is how much of an extension's stderr is kept to quote when
// it fails to start.
const tailBytes = 4 << 10

// tail keeps the last tailBytes written to it: the end of an extension's
// stderr, quoted when it fails to start. It is safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

// Write keeps the end of p.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= tailBytes {
		t.buf = append(t.buf[:0], p[len(p)-tailBytes:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// lines returns the last n non-empty lines kept, each at most 300 bytes.
func (t *tail) lines(n int) []string {
	t.mu.Lock()
	text := string(t.buf)
	t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		out = append(out, l)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
