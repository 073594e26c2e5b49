package editor

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// The walk for `@path` completion is bounded: it visits at most walkVisit
// entries and keeps at most walkKeep paths, so a folder like a home
// directory costs milliseconds, not seconds.
const (
	walkVisit = 20000
	walkKeep  = 5000
	// compRows is how many candidates the list shows at once.
	compRows = 8
)

// skipDir reports whether a folder of this name is never walked into
// (a switch, not a map: a package-level map is built by an init
// that every start of zot runs (and maps in the code around it)).
func skipDir(name string) bool {
	switch name {
	case ".git", "node_modules", ".hg", ".svn":
		return true
	}
	return false
}

// completion is the state of the `@path` list.
type completion struct {
	open      bool
	start     int    // rune index of the "@" in the cursor's line
	word      string // the word being completed, "@" included
	dismissed string // the word esc closed the list on
	items     []string
	sel       int
	files     []string // the folder's listing, from the last walk
}

func (c *completion) close() { c.open, c.items, c.sel = false, nil, 0 }

func (c *completion) dismiss() {
	c.dismissed = c.word
	c.close()
}

func (c *completion) move(d int) {
	if len(c.items) == 0 {
		return
	}
	c.sel = (c.sel + d + len(c.items)) % len(c.items)
}

// refreshCompletion opens, filters or closes the list after an edit.
func (m *Model) refreshCompletion() {
	c := &m.comp
	if m.opts.WorkDir == "" {
		return
	}
	line := m.lines[m.row]
	start := m.col
	for start > 0 && !unicode.IsSpace(line[start-1]) {
		start--
	}
	word := string(line[start:m.col])
	if !strings.HasPrefix(word, "@") || strings.HasPrefix(word, "@@") {
		c.dismissed = ""
		c.close()
		return
	}
	if word == c.dismissed {
		c.close()
		return
	}
	if word == "@" || c.files == nil {
		c.files = ListFiles(m.opts.WorkDir)
	}
	prev := c.word
	c.start, c.word = start, word
	c.items = MatchPaths(c.files, word[1:], 200)
	if word != prev {
		c.sel = 0
	}
	c.sel = min(c.sel, max(len(c.items)-1, 0))
	c.open = len(c.items) > 0
}

// acceptCompletion replaces the word with the chosen path.
func (m *Model) acceptCompletion() {
	c := &m.comp
	if !c.open || len(c.items) == 0 {
		return
	}
	choice := "@" + c.items[c.sel]
	if !strings.HasSuffix(choice, "/") {
		choice += " "
	}
	line := m.lines[m.row]
	nl := append(append(append([]rune(nil), line[:c.start]...), []rune(choice)...), line[m.col:]...)
	m.lines[m.row] = nl
	m.col = c.start + len([]rune(choice))
	c.close()
	m.refreshCompletion() // a folder goes on completing inside it
}

// view draws the list, one candidate a row, the chosen one highlighted.
func (c *completion) view(width int, st *Styles) string {
	var b strings.Builder
	first := 0
	if c.sel >= compRows {
		first = c.sel - compRows + 1
	}
	last := min(first+compRows, len(c.items))
	for i := first; i < last; i++ {
		row := ansi.Truncate("  "+c.items[i], width, "…")
		if i == c.sel {
			b.WriteString(st.Selected.Render(row))
		} else {
			b.WriteString(st.Item.Render(row))
		}
		b.WriteByte('\n')
	}
	if n := len(c.items) - last; n > 0 {
		b.WriteString(st.More.Render(fmt.Sprintf("  … %d more", n)))
		b.WriteByte('\n')
	}
	return b.String()
}

// ListFiles lists dir's files and folders (folders with a trailing "/"),
// as slash-separated paths relative to dir, shallow ones first. It skips
// .git, node_modules and what dir's .gitignore names in its simple forms
// (a name or glob, a leading or trailing "/"), and stops after a bounded
// number of entries.
func ListFiles(dir string) []string {
	ign := readIgnore(filepath.Join(dir, ".gitignore"))
	var out []string
	visited := 0
	// Breadth first, so a bound cuts deep paths, not whole top folders.
	queue := []string{"."}
	for len(queue) > 0 && visited < walkVisit && len(out) < walkKeep {
		rel := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			visited++
			if visited > walkVisit || len(out) >= walkKeep {
				break
			}
			name := e.Name()
			p := name
			if rel != "." {
				p = rel + "/" + name
			}
			isDir := e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && isDirPath(filepath.Join(dir, filepath.FromSlash(p))))
			if isDir && skipDir(name) || ign.match(p, name, isDir) {
				continue
			}
			if isDir {
				out = append(out, p+"/")
				if e.IsDir() { // never follow a link into another tree
					queue = append(queue, p)
				}
			} else {
				out = append(out, p)
			}
		}
	}
	return out
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// ignore is the simple forms of a .gitignore.
type ignore []ignoreRule

type ignoreRule struct {
	pattern  string
	dirOnly  bool
	anchored bool // matches the whole relative path, not a name
}

func readIgnore(file string) ignore {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ig ignore
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") {
			continue
		}
		r := ignoreRule{}
		if strings.HasSuffix(l, "/") {
			r.dirOnly = true
			l = strings.TrimSuffix(l, "/")
		}
		if strings.HasPrefix(l, "/") {
			r.anchored = true
			l = strings.TrimPrefix(l, "/")
		}
		if strings.Contains(l, "/") {
			r.anchored = true
		}
		if _, err := path.Match(l, ""); err != nil || l == "" {
			continue
		}
		r.pattern = l
		ig = append(ig, r)
	}
	return ig
}

func (ig ignore) match(rel, name string, isDir bool) bool {
	for _, r := range ig {
		if r.dirOnly && !isDir {
			continue
		}
		subject := name
		if r.anchored {
			subject = rel
		}
		if ok, _ := path.Match(r.pattern, subject); ok {
			return true
		}
	}
	return false
}

// MatchPaths returns at most limit of paths that match query, best first:
// a file name that starts with it, then one that holds it, then a path
// that holds it, then a path that holds its characters in order; ties go
// to the shorter path. Case is ignored. An empty query keeps the order of
// paths.
func MatchPaths(paths []string, query string, limit int) []string {
	if query == "" {
		return paths[:min(limit, len(paths))]
	}
	q := strings.ToLower(query)
	type hit struct {
		p     string
		score int
	}
	var hits []hit
	for _, p := range paths {
		lp := strings.ToLower(p)
		base := path.Base(strings.TrimSuffix(lp, "/"))
		score := -1
		switch {
		case lp == q: // the folder already typed out: offer what is in it
			continue
		case strings.HasPrefix(lp, q):
			score = 0
		case strings.HasPrefix(base, q):
			score = 1
		case strings.Contains(base, q):
			score = 2
		case strings.Contains(lp, q):
			score = 3
		case subsequence(lp, q):
			score = 4
		}
		if score >= 0 {
			hits = append(hits, hit{p, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score < hits[j].score
		}
		return len(hits[i].p) < len(hits[j].p)
	})
	out := make([]string, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.p)
	}
	return out
}

func subsequence(s, q string) bool {
	for _, r := range q {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}
