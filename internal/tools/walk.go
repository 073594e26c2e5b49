package tools

import (
	"context"
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
	if data, err := os.ReadFile(filepath.Join(top, ".git", "info", "exclude")); err == nil {
		w.ignores.add("", parseGitignore(string(data)))
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
	data, err := os.ReadFile(filepath.Join(abs, ".gitignore"))
	if err == nil {
		w.ignores.add(rel, parseGitignore(string(data)))
	}
}

// walk calls fn for every entry below the root that is not skipped, in
// lexical order, with its absolute path and its slash-separated path
// relative to the root. Unreadable directories are skipped. fn may return
// fs.SkipDir or fs.SkipAll. The walk stops with ctx.Err() when ctx ends.
func (w *treeWalker) walk(ctx context.Context, fn func(abs, rel string, d fs.DirEntry) error) error {
	n := 0
	return filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if n++; n%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if p == w.root {
			if err != nil {
				return err
			}
			w.loadIgnore(p, w.prefix)
			return nil
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(w.root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		isDir := d.IsDir()
		if d.Name() == ".git" || w.ignores.ignored(path.Join(w.prefix, rel), isDir) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if isDir {
			w.loadIgnore(p, path.Join(w.prefix, rel))
		}
		return fn(p, rel, d)
	})
}
