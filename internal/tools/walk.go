package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// treeWalker walks a directory tree for find and grep, skipping .git
// directories and whatever the tree's .gitignore files exclude. When the
// tree lies inside a git repository, the .gitignore files between the
// repository's top and the tree's root and .git/info/exclude apply too.
type treeWalker struct {
	root    string // absolute root of the walk
	prefix  string // root relative to the top of the ignore rules ("" when the same)
	ignores *ignoreSet
}

// newTreeWalker prepares a walk of root, an absolute directory.
func newTreeWalker(root string) *treeWalker {
	w := &treeWalker{root: root, ignores: newIgnoreSet()}
	top := findRepoTop(root)
	if top == "" {
		return w
	}
	rel, err := filepath.Rel(top, root)
	if err != nil {
		return w
	}
	if rel == "." {
		rel = ""
	}
	w.prefix = filepath.ToSlash(rel)
	if content, ok := readIgnoreFile(filepath.Join(top, ".git", "info", "exclude")); ok {
		w.ignores.add("", parseGitignore(content))
	}
	// The .gitignore files above the root; the root's own is read when the
	// walk enters it.
	dir := ""
	for _, seg := range splitPath(w.prefix) {
		w.loadIgnore(filepath.Join(top, filepath.FromSlash(dir)), dir)
		dir = path.Join(dir, seg)
	}
	return w
}

// findRepoTop returns the nearest directory at or above dir holding a .git
// entry, or "".
func findRepoTop(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// loadIgnore reads the .gitignore of the directory abs, whose path
// relative to the top is rel.
func (w *treeWalker) loadIgnore(abs, rel string) {
	if content, ok := readIgnoreFile(filepath.Join(abs, ".gitignore")); ok {
		w.ignores.add(rel, parseGitignore(content))
	}
}

// walk calls fn for every entry below the root that is not skipped, in
// lexical order, with its absolute path and its slash-separated path
// relative to the root. Symbolic links are reported, not followed.
// Unreadable directories are reported but not entered. fn may return
// fs.SkipDir (for a directory: do not enter it; for a file: skip the rest of
// its directory) or fs.SkipAll. The walk stops with ctx.Err() when ctx
// ends.
func (w *treeWalker) walk(ctx context.Context, fn func(abs, rel string, d fs.DirEntry) error) error {
	entries, err := readDirSorted(w.root)
	if err != nil && len(entries) == 0 {
		return err
	}
	w.loadIgnore(w.root, w.prefix)
	n := 0
	err = w.walkEntries(ctx, w.root, "", entries, &n, fn)
	if errors.Is(err, fs.SkipAll) || errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

// walkEntries walks the entries of the directory abs, whose path relative
// to the root is rel ("" for the root); n counts the entries seen.
func (w *treeWalker) walkEntries(ctx context.Context, abs, rel string, entries []fs.DirEntry, n *int, fn func(abs, rel string, d fs.DirEntry) error) error {
	for _, d := range entries {
		if *n++; *n%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p, r := filepath.Join(abs, d.Name()), path.Join(rel, d.Name())
		isDir := d.IsDir()
		if d.Name() == ".git" || w.ignores.ignored(path.Join(w.prefix, r), isDir) {
			continue
		}
		if isDir {
			w.loadIgnore(p, path.Join(w.prefix, r))
		}
		err := fn(p, r, d)
		switch {
		case errors.Is(err, fs.SkipDir) && isDir:
			continue
		case err != nil:
			return err
		case !isDir:
			continue
		}
		// A directory that cannot be read, or has turned into something
		// else since it was listed, is not entered.
		sub, _ := readDirSorted(p)
		if err := w.walkEntries(ctx, p, r, sub, n, fn); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
	}
	return nil
}
