package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"zot.dev/zot/internal/frontmatter"
	"zot.dev/zot/sdk/wire"
)

// ErrNotFound is matched (errors.Is) by the error of Load for a skill
// the set does not offer, or a file its folder does not hold (code
// not_found).
var ErrNotFound = wire.Sentinel(wire.CodeNotFound, "not found")

// ErrOutside is matched by the error of Load for a path that leaves the
// skill's folder: an absolute path, "..", a symbolic link pointing out
// (code invalid_params).
var ErrOutside = wire.Sentinel(wire.CodeInvalidParams, "outside the skill's folder")

// maxListed bounds the files Load lists of a skill's folder.
const maxListed = 100

// Loaded is what Load read.
type Loaded struct {
	Skill Skill
	// Path is the file read, relative to the skill's folder ("SKILL.md"
	// for the body).
	Path string
	// Text is the body (SKILL.md without its front matter), or the
	// file's text, or a folder's listing.
	Text string
	// Truncated reports that the file was longer than MaxFileBytes and
	// Text holds its start.
	Truncated bool
	// Binary reports a file that is not text: Text says so instead.
	Binary bool
	// Files are the files of the skill's folder besides SKILL.md
	// (relative, slash-separated, at most 100), given with the body.
	Files []string
}

// Load reads a skill's body, or the file (or folder) at a relative path
// inside its folder. The path is resolved inside the folder's real path:
// one that leads out, by "..", by being absolute or through a symbolic
// link, fails with ErrOutside.
func (s *Set) Load(name, file string) (Loaded, error) {
	sk, ok := s.Lookup(name)
	if !ok {
		return Loaded{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
	}
	out := Loaded{Skill: sk}
	root, err := os.OpenRoot(sk.Dir)
	if err != nil {
		return Loaded{}, fmt.Errorf("skill %q: %w", name, err)
	}
	defer root.Close()
	if file == "" || filepath.Clean(file) == FileName {
		data, err := readRoot(root, FileName)
		if err != nil {
			return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, FileName, err)
		}
		doc, err := frontmatter.Parse(sk.File, data)
		if err != nil {
			return Loaded{}, err
		}
		out.Path, out.Text = FileName, strings.TrimSpace(doc.Body)
		out.Files = listFiles(root)
		return out, nil
	}
	rel, err := inside(file)
	if err != nil {
		return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, file, err)
	}
	out.Path = filepath.ToSlash(rel)
	// A named pipe is opened without waiting for a writer, and refused
	// below as no regular file.
	f, err := root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, out.Path, rootError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, out.Path, err)
	}
	if st.IsDir() {
		entries, err := f.ReadDir(-1)
		if err != nil {
			return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, out.Path, err)
		}
		var lines []string
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			lines = append(lines, n)
		}
		slices.Sort(lines)
		out.Text = strings.Join(lines, "\n")
		return out, nil
	}
	if !st.Mode().IsRegular() {
		return Loaded{}, fmt.Errorf("skill %q: %s: not a regular file", name, out.Path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Loaded{}, fmt.Errorf("skill %q: %s: %w", name, out.Path, err)
	}
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
		out.Binary = true
		out.Text = fmt.Sprintf("%s is a binary file of %d bytes, at %s", out.Path, st.Size(), filepath.Join(sk.Dir, rel))
		return out, nil
	}
	if len(data) > MaxFileBytes {
		data = data[:MaxFileBytes]
		for len(data) > 0 && data[len(data)-1]&0xC0 == 0x80 {
			data = data[:len(data)-1]
		}
		if len(data) > 0 && data[len(data)-1] >= 0xC0 {
			data = data[:len(data)-1]
		}
		out.Truncated = true
	}
	out.Text = string(data)
	return out, nil
}

// inside checks that file is a relative path that stays in its folder
// and returns it cleaned.
func inside(file string) (string, error) {
	if filepath.IsAbs(file) || strings.HasPrefix(file, "/") || strings.HasPrefix(file, `\`) {
		return "", ErrOutside
	}
	rel := filepath.Clean(file)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", ErrOutside
	}
	return rel, nil
}

// rootError says what an os.Root refused in this package's terms.
func rootError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case strings.Contains(err.Error(), "path escapes from parent"):
		return ErrOutside
	}
	return unwrap(err)
}

// readRoot reads a regular file of root of at most MaxFileBytes; a named
// pipe, a device or a link leading out of root is refused without
// waiting on it.
func readRoot(root *os.Root, name string) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, rootError(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, unwrap(err)
	} else if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d KiB", MaxFileBytes>>10)
	}
	return data, nil
}

// listFiles lists the files of root but SKILL.md, relative and
// slash-separated, by path, at most maxListed; hidden files and folders
// are left out, and symbolic links are not followed.
func listFiles(root *os.Root) []string {
	var out []string
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case len(out) >= maxListed:
			return fs.SkipAll
		case err != nil && d != nil && d.IsDir():
			return fs.SkipDir
		case err != nil:
			return nil
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && p != FileName {
			out = append(out, p)
		}
		return nil
	})
	return out
}
