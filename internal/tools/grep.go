package tools

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// Limits of the grep tool.
const (
	grepDefaultMax  = 200
	grepMaxContext  = 50
	grepLineRunes   = 500
	grepMatchWindow = 1 << 20 // bytes of a line that are searched
	// grepMaxScan bounds the bytes grep reads of one file. It stops files
	// that never end (a /proc file stats as empty however much it yields).
	grepMaxScan = 1 << 30
)

// grepTool searches file contents with a regular expression.
type grepTool struct {
	cfg Config
	// maxScan replaces grepMaxScan when not zero.
	maxScan int64
}

func (*grepTool) Name() string { return "grep" }

func (*grepTool) Description() string {
	return "Search file contents with a regular expression (Go RE2 syntax) under a directory " +
		"(default: the working directory) or in one file. Skips .git, binary files and files " +
		"excluded by .gitignore, and named pipes, sockets and devices; searches at most the first " +
		byteSize(grepMaxScan) + " of each file. Prints matching lines as path:line:text (context lines as " +
		"path-line-text), paths relative to the working directory, lines cut at " +
		fmt.Sprint(grepLineRunes) + " characters."
}

func (*grepTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression to search for (Go RE2 syntax), matched against each line."},
    "path": {"type": "string", "description": "Directory or file to search, absolute or relative to the working directory. Default: the working directory."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.ts\"; a glob without '/' is matched against file names, otherwise against paths relative to the searched directory."},
    "ignore_case": {"type": "boolean", "description": "Match without regard to letter case. Default false."},
    "max_results": {"type": "integer", "minimum": 1, "description": "Stop after this many matching lines. Default 200."},
    "context": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Lines of context to show before and after each match. Default 0."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

// grepRun is the state of one grep call.
type grepRun struct {
	cwd      string
	re       *regexp.Regexp
	context  int
	max      int
	maxScan  int64 // zero: grepMaxScan
	matches  int
	files    int
	out      strings.Builder
	notes    []string // files not searched to their end
	stopped  bool
	lastFile string
}

func (t *grepTool) Run(ctx context.Context, call Call) (Result, error) {
	var pattern, path, glob string
	var ignoreCase bool
	maxResults, contextLines := grepDefaultMax, 0
	if _, err := decodeArgs(call.Args, "",
		stringArg("pattern", true, &pattern),
		stringArg("path", false, &path),
		stringArg("glob", false, &glob),
		boolArg("ignore_case", false, &ignoreCase),
		intArg("max_results", false, &maxResults),
		intArg("context", false, &contextLines),
	); err != nil {
		return invalidArgs(err), nil
	}
	switch {
	case pattern == "":
		return Errorf(`invalid arguments: field "pattern" must not be empty`), nil
	case maxResults < 1:
		return Errorf(fmt.Sprintf(`invalid arguments: field "max_results" must be at least 1, got %d`, maxResults)), nil
	case contextLines < 0 || contextLines > grepMaxContext:
		return Errorf(fmt.Sprintf(`invalid arguments: field "context" must be between 0 and %d, got %d`, grepMaxContext, contextLines)), nil
	}
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Errorf(fmt.Sprintf(`invalid arguments: field "pattern" is not a valid regular expression: %v`, err)), nil
	}
	if path == "" {
		path = "."
	}
	abs := resolvePath(t.cfg.CWD, path)
	shown := displayPath(t.cfg.CWD, abs)
	st, err := os.Stat(abs)
	if err != nil {
		return Errorf(fmt.Sprintf("cannot search %s: %v", shown, unwrapPathError(err))), nil
	}
	g := &grepRun{cwd: t.cfg.CWD, re: re, context: contextLines, max: maxResults, maxScan: t.maxScan}
	filter := newFileFilter(glob)

	if !st.IsDir() {
		err := g.searchFile(ctx, abs)
		var wrong *wrongTypeError
		switch {
		case ctx.Err() != nil:
			return Errorf("aborted"), nil
		case errors.As(err, &wrong):
			return Errorf(fmt.Sprintf("%s is a %s, not a regular file or directory; grep searches only those", shown, fileKind(wrong.mode))), nil
		case err != nil:
			return Errorf(fmt.Sprintf("cannot search %s: %v", shown, unwrapPathError(err))), nil
		}
	} else {
		w := newTreeWalker(abs)
		err := w.walk(ctx, func(p, rel string, d fs.DirEntry) error {
			if d.IsDir() || !filter.match(rel) {
				return nil
			}
			// Unreadable files, and those that are not regular files
			// (symbolic links are followed), are skipped.
			if err := g.searchFile(ctx, p); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			if g.stopped {
				return fs.SkipAll
			}
			return nil
		})
		if ctx.Err() != nil {
			return Errorf("aborted"), nil
		}
		if err != nil {
			return Errorf(fmt.Sprintf("cannot search %s: %v", shown, unwrapPathError(err))), nil
		}
	}
	notes := strings.Join(g.notes, "\n")
	if g.matches == 0 {
		if notes != "" {
			notes = "\n" + notes
		}
		return Text(fmt.Sprintf("no matches for %q in %s%s", pattern, shown, notes)), nil
	}
	if notes != "" {
		g.out.WriteString(notes + "\n")
	}
	if g.stopped {
		fmt.Fprintf(&g.out, "[stopped after %d matches; narrow the search or raise max_results]\n", g.max)
	}
	return Text(strings.TrimSuffix(g.out.String(), "\n")), nil
}

// searchFile greps one file, which must be a regular file (a
// *wrongTypeError says it is not). A binary file is skipped; one that goes
// on past g.maxScan bytes is searched that far, with a note.
func (g *grepRun) searchFile(ctx context.Context, abs string) error {
	f, _, err := openRegular(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	return g.search(ctx, f, displayPath(g.cwd, abs))
}

// search greps the content of the file shown.
func (g *grepRun) search(ctx context.Context, r io.Reader, shown string) error {
	maxScan := cmp.Or(g.maxScan, grepMaxScan)
	br := bufio.NewReaderSize(&capReader{ctx: ctx, r: r, max: maxScan}, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errCapped) {
		return err
	}
	if looksBinary(head) {
		return nil
	}
	g.files++
	lr := &lineReader{br: br, keepBytes: grepMatchWindow}
	type held struct {
		n    int
		text string
	}
	var before []held // up to g.context lines preceding the current one
	after := 0        // context lines still to print after a match
	lastPrinted := 0  // number of the last line printed in this file
	capped := false   // the scan limit ended the last line read
	for n := 1; ; n++ {
		if capped {
			g.notes = append(g.notes, fmt.Sprintf("[searched only the first %s of %s; use bash to search the rest]", byteSize(maxScan), shown))
			return nil
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		capped = errors.Is(err, errCapped)
		if err != nil && !capped {
			return err
		}
		if capped && ln.size == 0 {
			continue
		}
		if g.re.Match(ln.text) {
			if g.matches >= g.max {
				g.stopped = true
				return nil
			}
			g.matches++
			first := n
			if len(before) > 0 {
				first = before[0].n
			}
			if g.context > 0 && g.out.Len() > 0 && (g.lastFile != shown || first > lastPrinted+1) {
				g.out.WriteString("--\n")
			}
			for _, h := range before {
				fmt.Fprintf(&g.out, "%s-%d-%s\n", shown, h.n, h.text)
			}
			before = before[:0]
			fmt.Fprintf(&g.out, "%s:%d:%s\n", shown, n, grepText(ln))
			g.lastFile, lastPrinted, after = shown, n, g.context
			continue
		}
		if after > 0 {
			fmt.Fprintf(&g.out, "%s-%d-%s\n", shown, n, grepText(ln))
			lastPrinted = n
			after--
			continue
		}
		if g.context > 0 {
			if len(before) == g.context {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, held{n, grepText(ln)})
		}
	}
}

// grepText renders a line for output: valid UTF-8, cut at grepLineRunes
// characters.
func grepText(ln line) string {
	text, cut := truncateRunes(ln.text, grepLineRunes)
	s := strings.ToValidUTF8(string(text), "\uFFFD")
	if cut || ln.size > len(ln.text) {
		s += " …"
	}
	return s
}

// fileFilter is grep's optional glob on file paths.
type fileFilter struct {
	glob     globPattern
	nameOnly bool
	set      bool
}

// newFileFilter compiles glob; an empty glob lets every file through. A
// glob without '/' is matched against the file name, otherwise against
// the path relative to the searched directory.
func newFileFilter(glob string) fileFilter {
	glob = strings.TrimPrefix(glob, "./")
	if glob == "" {
		return fileFilter{}
	}
	g := compileGlob(glob)
	if len(g.segs) == 0 {
		return fileFilter{}
	}
	return fileFilter{glob: g, nameOnly: !strings.Contains(glob, "/"), set: true}
}

func (f fileFilter) match(rel string) bool {
	if !f.set {
		return true
	}
	if f.nameOnly {
		return matchSegment(f.glob.segs[0], rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return f.glob.match(rel)
}
