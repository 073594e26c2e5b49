package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// indexName and lockName are the index and its lock file, in the
// sessions folder.
const (
	indexName = "index.json"
	lockName  = ".index.lock"
)

// maxIndexBytes bounds the index read: far more than the entries of a
// hundred thousand sessions take.
const maxIndexBytes = 256 << 20

// indexVersion is the format of index.json this package writes; an index
// of another version is rebuilt.
const indexVersion = 3

// indexFile is index.json.
type indexFile struct {
	Version  int          `json:"version"`
	Sessions []indexEntry `json:"sessions"`
}

// indexEntry is an Entry as index.json holds it, with the size and
// modification time of the file it was made from.
type indexEntry struct {
	Entry
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime_ns"`
}

// refresh returns every session's entry, each up to date with its file,
// and rewrites the index when it was not.
func (s *Store) refresh(ctx context.Context) ([]Entry, error) {
	idx, ok := s.readIndex()
	ents, changed, err := s.scan(idx)
	if err != nil || (ok && !changed) {
		return ents, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		// The entries are right; only the index stays behind, for the
		// next process to bring up to date.
		fmt.Fprintf(s.log, "zot: session index: %v\n", err)
		return ents, nil
	}
	defer unlock()
	// Another process may have brought it up to date meanwhile.
	idx, ok = s.readIndex()
	if ents, changed, err = s.scan(idx); err != nil || (ok && !changed) {
		return ents, err
	}
	out := indexFile{Version: indexVersion, Sessions: make([]indexEntry, 0, len(ents))}
	for _, e := range ents {
		out.Sessions = append(out.Sessions, indexEntry{Entry: e, Size: e.size, MTime: e.mtime})
	}
	data, err := json.Marshal(out)
	if err == nil {
		err = atomicfile.Write(filepath.Join(s.dir, indexName), append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(s.log, "zot: writing the session index: %v\n", err)
	}
	return ents, nil
}

// readIndex reads index.json into a table by id; ok is false when it is
// missing, does not decode or is of another version (then it is rebuilt).
func (s *Store) readIndex() (map[string]indexEntry, bool) {
	path := filepath.Join(s.dir, indexName)
	// Checked before reading, so that a named pipe or a huge file in
	// its place is rebuilt over, never waited on.
	if st, err := os.Lstat(path); err == nil && (!st.Mode().IsRegular() || st.Size() > maxIndexBytes) {
		fmt.Fprintf(s.log, "zot: session index %s is not a regular file of at most %d MiB (rebuilding it)\n", path, maxIndexBytes>>20)
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(s.log, "zot: session index: %v (rebuilding it)\n", err)
		}
		return nil, false
	}
	var f indexFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != indexVersion {
		fmt.Fprintf(s.log, "zot: session index %s is damaged (rebuilding it)\n", filepath.Join(s.dir, indexName))
		return nil, false
	}
	m := make(map[string]indexEntry, len(f.Sessions))
	for _, e := range f.Sessions {
		if ValidID(e.ID) {
			m[e.ID] = e
		}
	}
	return m, true
}

// scan lists the session files, taking each entry from idx while its
// file is unchanged and reading the file otherwise; changed reports
// whether idx differs from the result.
func (s *Store) scan(idx map[string]indexEntry) (ents []Entry, changed bool, err error) {
	dir, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, false, fmt.Errorf("listing sessions: %w", err)
	}
	for _, d := range dir {
		id, ok := strings.CutSuffix(d.Name(), ".jsonl")
		if !ok || !ValidID(id) || !d.Type().IsRegular() {
			continue
		}
		st, err := d.Info()
		if err != nil {
			changed = true // gone since ReadDir
			continue
		}
		size, mtime := st.Size(), st.ModTime().UnixNano()
		if e, ok := idx[id]; ok && e.Size == size && e.MTime == mtime {
			e.Entry.Path, e.Entry.size, e.Entry.mtime = s.Path(id), size, mtime
			ents = append(ents, e.Entry)
			continue
		}
		changed = true
		ents = append(ents, s.describe(id, st))
	}
	if len(ents) != len(idx) {
		changed = true
	}
	return ents, changed, nil
}

// titleRunes bounds an entry's title.
const titleRunes = 80

// describe reads the entry of session id from its file, whose stat is st.
func (s *Store) describe(id string, st fs.FileInfo) Entry {
	path := s.Path(id)
	e := Entry{ID: id, Path: path, Updated: st.ModTime().UTC(), size: st.Size(), mtime: st.ModTime().UnixNano()}
	info, err := sessionfile.ReadInfo(path)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.CWD, e.Created, e.Owner = info.CWD, info.Created, info.Owner
	if info.Parent != "" {
		e.Parent, e.ForkMessage, e.ParentCall = info.Parent, info.ForkMessage, info.ParentCall
		if info.ForkIndex >= 0 {
			i := info.ForkIndex
			e.ForkIndex = &i
		}
	}
	if e.Created.IsZero() {
		e.Created = timeOfID(id, e.Updated)
	}
	if err := summarize(path, &e); err != nil {
		e.Error = err.Error()
	}
	return e
}

// The prefixes of the lines of a session file, as internal/sessionfile
// writes them (encoding/json, fields in their declared order).
var (
	userLine      = []byte(`{"role":"user"`)
	assistantLine = []byte(`{"role":"assistant"`)
	roleLine      = []byte(`{"role":`)
	resetLine     = []byte(`{"reset":true`)
	modelKey      = []byte(`"model":"`)
)

// summarize counts the messages of the session file at path and finds
// its title and model, reading it a line at a time: each line is
// checked to be JSON, only the line the title comes from is decoded,
// so a listing costs far less than loading the transcript. A torn last
// line is ignored, as loading it does; a reset line (files of format 0)
// starts the transcript again.
func summarize(path string, e *Entry) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err == io.EOF {
			return nil // the end, or a torn last line
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return fmt.Errorf("session file %s: line %d does not decode", path, n)
		}
		switch {
		case bytes.HasPrefix(line, resetLine):
			e.Messages, e.Title = 0, ""
		case bytes.HasPrefix(line, userLine):
			e.Messages++
			if e.Title == "" {
				e.Title = titleOfLine(line)
			}
		case bytes.HasPrefix(line, assistantLine):
			e.Messages++
			if i := bytes.LastIndex(line, modelKey); i >= 0 {
				rest := line[i+len(modelKey):]
				if j := bytes.IndexByte(rest, '"'); j > 0 {
					e.Model = string(rest[:j])
				}
			}
		case bytes.HasPrefix(line, roleLine):
			e.Messages++
		}
	}
}

// titleOfLine is the title a user message's line gives: its first text,
// unless it is a compaction's summary.
func titleOfLine(line []byte) string {
	var m struct {
		Meta    map[string]string `json:"meta"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(line, &m) != nil || m.Meta["compaction"] == "true" {
		return ""
	}
	msg := llm.Message{Role: llm.RoleUser}
	for _, b := range m.Content {
		if b.Type == "text" {
			msg.Content = append(msg.Content, &llm.TextBlock{Text: b.Text})
		}
	}
	return titleOf(msg)
}

// titleOf is the first text of m on one line, at most titleRunes long.
func titleOf(m llm.Message) string {
	for _, b := range m.Content {
		t, ok := b.(*llm.TextBlock)
		if !ok || strings.TrimSpace(t.Text) == "" {
			continue
		}
		title := strings.Join(strings.FieldsFunc(t.Text, unicode.IsSpace), " ")
		if r := []rune(title); len(r) > titleRunes {
			title = string(r[:titleRunes-1]) + "…"
		}
		return title
	}
	return ""
}

// timeOfID is the creation time an id begins with, else def.
func timeOfID(id string, def time.Time) time.Time {
	if len(id) >= 16 {
		if t, err := time.Parse("20060102T150405Z", id[:16]); err == nil {
			return t
		}
	}
	return def
}
