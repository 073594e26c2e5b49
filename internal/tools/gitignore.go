package tools

import (
	"bytes"
	"context"
	"errors"
	"strings"
)

// ignoreFileMaxBytes bounds what is read of one ignore file; the lines past
// it are dropped.
const ignoreFileMaxBytes = 1 << 20

// readIgnoreFile returns the content of the ignore file at path. A file that
// is missing, unreadable or not a regular file (a named pipe, a directory)
// counts as absent.
func readIgnoreFile(path string) (string, bool) {
	f, st, err := openRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, err := readAllCapped(context.Background(), f, st.Size(), ignoreFileMaxBytes)
	switch {
	case errors.Is(err, errCapped):
		data = data[:bytes.LastIndexByte(data[:ignoreFileMaxBytes], '\n')+1]
	case err != nil:
		return "", false
	}
	return string(data), true
}

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	glob globPattern
	// negate: the line started with '!' and re-includes what it matches.
	negate bool
	// dirOnly: the line ended with '/' and matches directories only.
	dirOnly bool
	// anchored: the pattern held a '/' before its end, so it matches paths
	// relative to the .gitignore's directory; otherwise it matches the last
	// path segment at any depth.
	anchored bool
}

// parseGitignore parses the content of a .gitignore file: blank lines and
// lines starting with '#' are skipped, trailing spaces are dropped unless
// escaped with '\', and "\#" and "\!" start patterns with a literal '#' or
// '!'.
func parseGitignore(content string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSuffix(line, "\r")
		line = trimUnescapedSpaces(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimLeft(line, "/")
		}
		r.glob = compileGlob(line)
		if len(r.glob.segs) == 0 {
			continue
		}
		rules = append(rules, r)
	}
	return rules
}

// trimUnescapedSpaces drops trailing spaces that are not escaped with '\'.
func trimUnescapedSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		// Count the backslashes before this space.
		bs := 0
		for i := end - 2; i >= 0 && s[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			break
		}
		end--
	}
	return s[:end]
}

// matches reports whether the rule matches rel, a slash-separated path
// relative to the directory of the rule's .gitignore.
func (r *ignoreRule) matches(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.anchored {
		return r.glob.match(rel)
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	return matchSegment(r.glob.segs[0], name)
}

// ignoreSet holds the .gitignore rules of a tree, by the directory
// (slash-separated, relative to the tree's top, "" for the top) of the
// file they came from.
type ignoreSet struct {
	byDir map[string][]ignoreRule
}

func newIgnoreSet() *ignoreSet { return &ignoreSet{byDir: make(map[string][]ignoreRule)} }

// add records the rules of the .gitignore file in dir.
func (s *ignoreSet) add(dir string, rules []ignoreRule) {
	if len(rules) > 0 {
		s.byDir[dir] = append(s.byDir[dir], rules...)
	}
}

// ignored reports whether rel (slash-separated, relative to the top) is
// ignored: the rules of each ancestor directory's .gitignore apply, deeper
// files after shallower ones and later lines after earlier ones, and the
// last rule that matches decides.
func (s *ignoreSet) ignored(rel string, isDir bool) bool {
	if len(s.byDir) == 0 {
		return false
	}
	ignored := false
	dir := ""
	for {
		sub := rel
		if dir != "" {
			sub = rel[len(dir)+1:]
		}
		for i := range s.byDir[dir] {
			r := &s.byDir[dir][i]
			if r.matches(sub, isDir) {
				ignored = !r.negate
			}
		}
		next := strings.IndexByte(sub, '/')
		if next < 0 {
			return ignored
		}
		if dir == "" {
			dir = sub[:next]
		} else {
			dir = dir + "/" + sub[:next]
		}
	}
}
