// Package session keeps a transcript in a file so a later run can resume
// it. The file is JSON Lines: one message per line, appended and synced to
// disk as the transcript grows; when compaction or clear rewrites the
// transcript, a reset line is written and the new transcript follows, so
// the file is only ever appended to. A torn last line (a crash mid-write)
// is ignored when the file is loaded.
package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/llm"
)

// File is an open session file.
type File struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// saved is the transcript as the file holds it.
	saved []llm.Message
}

// Open opens (creating it, mode 0600, and its directory if needed) the
// session file at path and returns it with the transcript it holds.
func Open(path string) (*File, []llm.Message, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("session directory: %w", err)
	}
	msgs, err := Load(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening session: %w", err)
	}
	return &File{path: path, f: f, saved: msgs}, msgs, nil
}

// Load reads the transcript of a session file.
func Load(path string) ([]llm.Message, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			if i == len(lines)-1 {
				break // a torn last line: the write it belonged to never finished
			}
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if r.Reset {
			msgs = nil
			continue
		}
		content, err := decodeBlocks(r.Content)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		msgs = append(msgs, llm.Message{Role: llm.Role(r.Role), Content: content, Time: r.Time, Meta: r.Meta})
	}
	return msgs, nil
}

// Save brings the file up to date with the transcript msgs: the messages
// added since the last Save are appended; when earlier messages changed
// (compaction, clear), a reset and the whole transcript are written. The
// file is synced before Save returns.
func (s *File) Save(msgs []llm.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	start := 0
	if extends(msgs, s.saved) {
		start = len(s.saved)
	} else {
		buf.WriteString(`{"reset":true}` + "\n")
	}
	if start == len(msgs) && buf.Len() == 0 {
		return nil
	}
	for _, m := range msgs[start:] {
		line, err := encodeMessage(m)
		if err != nil {
			return fmt.Errorf("encoding message: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := s.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("syncing session: %w", err)
	}
	s.saved = append(s.saved[:0:0], msgs...)
	return nil
}

// extends reports whether msgs begins with saved, message for message.
func extends(msgs, saved []llm.Message) bool {
	if len(msgs) < len(saved) {
		return false
	}
	for i := range saved {
		a, b := msgs[i], saved[i]
		if a.Role != b.Role || !a.Time.Equal(b.Time) || len(a.Content) != len(b.Content) {
			return false
		}
		for j := range a.Content {
			if a.Content[j] != b.Content[j] {
				return false
			}
		}
	}
	return true
}

// Close closes the file.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Close()
}

// Path returns the file's path.
func (s *File) Path() string { return s.path }

// DirFor returns the directory under home that holds the sessions of the
// working directory cwd.
func DirFor(home, cwd string) string {
	name := strings.Trim(strings.NewReplacer("/", "-", "\\", "-", ":", "").Replace(filepath.Clean(cwd)), "-")
	if name == "" {
		name = "root"
	}
	return filepath.Join(home, "sessions", name)
}

// Newest returns the most recently modified session file in dir, or a
// new file name there (stamped with now) when it has none.
func Newest(dir string, now time.Time) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("listing sessions: %w", err)
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cands []cand
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cands = append(cands, cand{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	if len(cands) == 0 {
		return filepath.Join(dir, now.UTC().Format("20060102T150405Z")+".jsonl"), nil
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	return cands[0].path, nil
}
