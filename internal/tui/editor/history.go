package editor

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// HistoryLimit is how many inputs a folder's history keeps.
const HistoryLimit = 500

// maxEntry is the longest input kept in the history (a huge paste is
// submitted but not remembered).
const maxEntry = 64 << 10

// History is the inputs submitted in one folder, oldest first, kept in a
// file of JSON strings, one a line, under the zot home:
// <home>/history/<key>.jsonl, the key a hash of the folder's absolute path.
// A nil *History keeps nothing. Its methods may be called from any
// goroutine.
type History struct {
	mu      sync.Mutex
	path    string // "" keeps the entries in memory only
	limit   int
	entries []string
	written int // lines in the file
}

// HistoryPath is the file that keeps folder's history under the zot home.
func HistoryPath(zotHome, folder string) string {
	if abs, err := filepath.Abs(folder); err == nil {
		folder = abs
	}
	sum := sha256.Sum256([]byte(folder))
	return filepath.Join(zotHome, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// OpenHistory reads the history kept at path (see HistoryPath), keeping the
// last limit entries (HistoryLimit when limit <= 0). A missing file is an
// empty history; lines that do not decode are skipped. path "" gives a
// history in memory only.
func OpenHistory(path string, limit int) (*History, error) {
	if limit <= 0 {
		limit = HistoryLimit
	}
	h := &History{path: path, limit: limit}
	if path == "" {
		return h, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("reading input history: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4*maxEntry)
	for sc.Scan() {
		h.written++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > limit {
		h.entries = h.entries[len(h.entries)-limit:]
	}
	return h, nil
}

// Len is the number of entries.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// At is entry i, 0 the oldest.
func (h *History) At(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entries[i]
}

// Add appends s (unless it repeats the last entry or is too long to keep)
// and writes it to the file; the file is rewritten with the last limit
// entries once it holds twice as many lines. A failed write keeps the entry
// in memory and is returned.
func (h *History) Add(s string) error {
	if h == nil || strings.TrimSpace(s) == "" || len(s) > maxEntry {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == s {
		return nil
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > h.limit {
		h.entries = append(h.entries[:0:0], h.entries[len(h.entries)-h.limit:]...)
	}
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	if h.written+1 > 2*h.limit {
		return h.rewrite()
	}
	line, _ := json.Marshal(s)
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	h.written++
	return nil
}

// rewrite replaces the file with the entries in memory (write a temp file,
// rename it over).
func (h *History) rewrite() error {
	var buf bytes.Buffer
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".history-*")
	if err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), h.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving input history: %w", err)
	}
	h.written = len(h.entries)
	return nil
}
