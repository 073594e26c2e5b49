// Package instructions finds a project's instruction files for the model:
// AGENTS.md (or CLAUDE.md in a folder without one) in each folder from
// the repository's root down to the working directory, joined outermost
// first, each under its path, within a size bound (docs/skills.md).
package instructions

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DefaultLimit bounds the instructions' text, all files together.
const DefaultLimit = 32 << 10

// Names are the instruction files a folder may have, in the order looked
// for: the first that exists is that folder's.
var Names = []string{"AGENTS.md", "CLAUDE.md"}

// File is one instruction file that went into the text.
type File struct {
	// Path is the file's absolute path.
	Path string
	// Bytes is the file's size.
	Bytes int64
	// Included is how many of its bytes are in the text: less than Bytes
	// when the bound cut it, 0 when it was left out.
	Included int
}

// Set is the instructions of one working directory.
type Set struct {
	// Files are the files found, outermost first.
	Files []File
	// Text is what goes into the system prompt: each file under a line
	// naming its path; "" when there are none.
	Text string
	// Notice tells what the bound cut, for the user; "" when nothing was
	// cut.
	Notice string
}

// Dirs returns the folders from cwd up to its repository's root (the
// nearest folder holding .git), nearest first. Outside a repository it
// is cwd alone.
func Dirs(cwd string) []string {
	var dirs []string
	for d := cwd; ; {
		dirs = append(dirs, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return dirs
		}
		parent := filepath.Dir(d)
		if parent == d {
			return []string{cwd}
		}
		d = parent
	}
}

// Load reads the instruction files of cwd (an absolute path) within limit
// bytes of text (DefaultLimit when 0 or less). A file that cannot be read
// is named in the notice and left out.
func Load(cwd string, limit int) Set {
	if limit <= 0 {
		limit = DefaultLimit
	}
	dirs := Dirs(cwd)
	var set Set
	var b strings.Builder
	var notices []string
	left := limit
	for i := len(dirs) - 1; i >= 0; i-- {
		path, data, size, err := read(dirs[i], left)
		if path == "" {
			continue
		}
		f := File{Path: path, Bytes: size}
		if err != nil {
			notices = append(notices, fmt.Sprintf("%s left out: %v", path, err))
			set.Files = append(set.Files, f)
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n"))
		if text == "" {
			set.Files = append(set.Files, f)
			continue
		}
		f.Included = len(data)
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Instructions from %s:\n\n%s", path, text)
		switch {
		case int64(len(data)) < size:
			fmt.Fprintf(&b, "\n\n[%s is %d bytes; only its first %d are shown: project instructions are limited to %d bytes in all]", path, size, len(data), limit)
			notices = append(notices, fmt.Sprintf("%s cut to its first %d of %d bytes (project instructions are limited to %d bytes in all)", path, len(data), size, limit))
		}
		left -= len(data)
		set.Files = append(set.Files, f)
	}
	set.Text = b.String()
	if len(notices) > 0 {
		set.Notice = "project instructions: " + strings.Join(notices, "; ")
	}
	return set
}

// read reads dir's instruction file, at most max bytes of it: its path
// ("" when the folder has none), the bytes read and its size. A bound of
// 0 or less reads nothing and says it was left out.
func read(dir string, max int) (string, []byte, int64, error) {
	for _, name := range Names {
		path := filepath.Join(dir, name)
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if max <= 0 {
			return path, nil, st.Size(), fmt.Errorf("the limit of project instructions was reached")
		}
		f, err := os.Open(path)
		if err != nil {
			return path, nil, st.Size(), err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, int64(max)))
		if err != nil {
			return path, nil, st.Size(), err
		}
		// Never cut a character in two.
		if int64(len(data)) < st.Size() {
			for len(data) > 0 && data[len(data)-1]&0xC0 == 0x80 {
				data = data[:len(data)-1]
			}
			if len(data) > 0 && data[len(data)-1] >= 0xC0 {
				data = data[:len(data)-1]
			}
		}
		return path, data, st.Size(), nil
	}
	return "", nil, 0, nil
}
