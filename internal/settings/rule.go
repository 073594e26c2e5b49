package settings

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Rule is one permission rule: a tool, and optionally a pattern its
// calls must match. Written `bash(go test *)`, `edit(src/**)`, `read`,
// `mcp__github__*`.
type Rule struct {
	// Tool is a tool's name; `*` in it matches any run of characters
	// (`mcp__github__*`).
	Tool string
	// Pattern, when set, narrows the rule: for bash a command pattern
	// (commandMatches), for the other tools a pattern of the path the
	// call names (pathMatches). Empty: every call of the tool.
	Pattern string
}

// builtins are zot's own tools, whose names a rule may write in any case
// (`Bash(go test *)`).
var builtins = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// ParseRule reads a rule as written in a settings file.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, pattern, hasPattern := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if hasPattern {
		if !strings.HasSuffix(pattern, ")") {
			return Rule{}, fmt.Errorf("rule %q: a pattern ends with ')'", s)
		}
		pattern = strings.TrimSpace(strings.TrimSuffix(pattern, ")"))
		if pattern == "" {
			return Rule{}, fmt.Errorf("rule %q: the pattern between the parentheses is empty (write the tool alone for all its calls)", s)
		}
	}
	if name == "" {
		return Rule{}, fmt.Errorf("rule %q: it names no tool", s)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.*:", r)) {
			return Rule{}, fmt.Errorf("rule %q: %q is not a tool name", s, name)
		}
	}
	for _, b := range builtins {
		if strings.EqualFold(name, b) {
			name = b
		}
	}
	return Rule{Tool: name, Pattern: pattern}, nil
}

// String writes the rule as ParseRule reads it.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// Call is a tool call a rule is matched with.
type Call struct {
	// Tool is the tool's name.
	Tool string
	// Args are the call's arguments.
	Args json.RawMessage
	// CWD is the session's working directory, against which the call's
	// relative paths are resolved.
	CWD string

	fields map[string]json.RawMessage // Args decoded once (decoded), else nil
}

// decoded returns c with its arguments decoded, so that matching it
// with many rules decodes them once.
func (c Call) decoded() Call {
	if c.fields == nil {
		if json.Unmarshal(c.Args, &c.fields) != nil || c.fields == nil {
			c.fields = map[string]json.RawMessage{}
		}
	}
	return c
}

// arg returns the string argument name of the call, and whether it has
// one.
func (c Call) arg(name string) (string, bool) {
	c = c.decoded()
	raw, ok := c.fields[name]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// defaultDirTools are the tools whose path defaults to the working
// directory.
var defaultDirTools = []string{"ls", "grep", "find"}

// path returns the absolute, cleaned path the call names, and whether it
// names one.
func (c Call) path() (string, bool) {
	p, ok := c.arg("path")
	if !ok || p == "" {
		if !contains(defaultDirTools, c.Tool) {
			return "", false
		}
		p = "."
	}
	return resolvePath(c.CWD, p), true
}

// resolvePath makes p absolute as the tools do: "~" and "~/…" are the
// user's home, a relative path is under cwd.
func resolvePath(cwd, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// effect is what a rule does to the calls it matches.
type effect int

const (
	allowEffect effect = iota
	denyEffect
)

// nameMatches reports whether the tool name matches the rule's Tool,
// where `*` matches any run of characters.
func (r Rule) nameMatches(tool string) bool {
	return glob(r.Tool, tool)
}

// Matches reports whether the rule covers the call, as an allow rule
// reads it: for bash, every command of the line must match (a line with
// a command substitution or a redirection to a file matches no allow
// rule); for a path pattern, the path both as written and with its
// symbolic links resolved must match.
func (r Rule) Matches(c Call) bool { return r.matches(c, allowEffect) }

// matches reports whether the rule covers the call, read as eff says.
func (r Rule) matches(c Call, eff effect) bool {
	if !r.nameMatches(c.Tool) {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	if c.Tool == "bash" {
		cmd, ok := c.arg("command")
		if !ok {
			return false
		}
		parts, opaque := splitCommand(cmd)
		if eff == denyEffect {
			if commandMatches(r.Pattern, strings.TrimSpace(cmd)) {
				return true
			}
			for _, p := range parts {
				if commandMatches(r.Pattern, p) {
					return true
				}
			}
			return false
		}
		if opaque || len(parts) == 0 {
			return false
		}
		for _, p := range parts {
			if !commandMatches(r.Pattern, p) {
				return false
			}
		}
		return true
	}
	p, ok := c.path()
	if !ok {
		return false
	}
	pat := resolvePattern(c.CWD, r.Pattern)
	lexical := pathMatches(pat, p)
	real := pathMatches(pat, realPath(p))
	if eff == denyEffect {
		return lexical || real
	}
	return lexical && real
}

// resolvePattern makes a path pattern absolute: `/…` is absolute, `~/…`
// is under the user's home, anything else is under cwd.
func resolvePattern(cwd, pat string) string {
	if pat == "~" || strings.HasPrefix(pat, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			pat = filepath.Join(home, pat[1:])
		}
	}
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(cwd, pat)
	}
	return filepath.ToSlash(filepath.Clean(pat))
}

// realPath resolves the symbolic links of p's longest part that exists.
func realPath(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// pathMatches reports whether the absolute path p is matched by pat, an
// absolute pattern whose elements are path.Match patterns and where `**`
// is any number of elements; a pattern matches a path and everything
// under it.
func pathMatches(pat, p string) bool {
	ps := strings.Split(strings.Trim(pat, "/"), "/")
	xs := strings.Split(strings.Trim(filepath.ToSlash(p), "/"), "/")
	return matchElems(ps, xs)
}

// matchElems matches path elements: true once the pattern is used up
// (what is left is under what matched).
func matchElems(ps, xs []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			rest := ps[1:]
			for i := 0; i <= len(xs); i++ {
				if matchElems(rest, xs[i:]) {
					return true
				}
			}
			return false
		}
		if len(xs) == 0 {
			return false
		}
		ok, err := path.Match(ps[0], xs[0])
		if err != nil || !ok {
			return false
		}
		ps, xs = ps[1:], xs[1:]
	}
	return true
}

// commandMatches reports whether one command matches a bash pattern:
// `*` matches any run of characters; a pattern ending in ` *` also
// matches the command without arguments (`go test *` matches `go test`).
// Runs of blanks count as one space.
func commandMatches(pat, cmd string) bool {
	pat, cmd = squeeze(pat), squeeze(cmd)
	if glob(pat, cmd) {
		return true
	}
	if base, ok := strings.CutSuffix(pat, " *"); ok {
		return glob(base, cmd)
	}
	return false
}

// squeeze trims s and turns each run of blanks into one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// glob reports whether s matches pat, where `*` matches any run of
// characters (spaces and slashes too) and everything else itself.
func glob(pat, s string) bool {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

// splitCommand splits a shell line into its simple commands, at the
// control operators outside quotes (`;`, `&`, `|`, `&&`, `||`, newlines,
// parentheses). opaque is set when the line holds what a pattern cannot
// judge: a command substitution (`$(…)`, backquotes), a parameter
// expansion in braces (`${…}`), an arithmetic expansion (`$[…]`), ANSI-C
// quoting (`$'…'`), a process substitution, or a redirection to a file
// (other than /dev/null or another descriptor).
func splitCommand(line string) (parts []string, opaque bool) {
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			parts = append(parts, s)
		}
		cur.Reset()
	}
	var quote byte // 0, '\'' or '"'
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
			cur.WriteByte(c)
			continue
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
			continue
		case c == '`':
			opaque = true
		case c == '$' && i+1 < len(line) && strings.IndexByte("({['", line[i+1]) >= 0:
			// $(…), and what can run a command out of a value: ${…}
			// (`${x@P}`, an array subscript read as arithmetic), $[…]
			// (arithmetic), $'…' (quoting this parser does not read).
			opaque = true
		case quote == '"':
			if c == '"' {
				quote = 0
			}
			cur.WriteByte(c)
			continue
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')':
			if (c == '(' || c == ')') && i > 0 && (line[i-1] == '<' || line[i-1] == '>') {
				opaque = true
			}
			if c == '&' && i > 0 && line[i-1] == '>' {
				cur.WriteByte(c) // >&2
				continue
			}
			flush()
			continue
		case c == '>' || c == '<':
			if !harmlessRedirect(line, i) {
				opaque = true
			}
		}
		cur.WriteByte(c)
	}
	flush()
	if quote != 0 {
		opaque = true
	}
	return parts, opaque
}

// harmlessRedirect reports whether the redirection at line[i] writes
// only to another descriptor or to /dev/null (`2>&1`, `>/dev/null`,
// `2> /dev/null`).
func harmlessRedirect(line string, i int) bool {
	if line[i] == '<' {
		return false
	}
	rest := line[i+1:]
	rest = strings.TrimPrefix(rest, ">") // >>
	if strings.HasPrefix(rest, "&") {
		return true
	}
	rest = strings.TrimLeft(rest, " \t")
	target, _, _ := strings.Cut(rest, " ")
	for _, stop := range []string{";", "&", "|", "\n", ")"} {
		target, _, _ = strings.Cut(target, stop)
	}
	return target == "/dev/null"
}

// Suggest is the rule an "allow always" answer to the call saves unless
// the answer names its own: for bash, the command's first word, with its
// second when that looks like a subcommand (`go test *`, `make *`); for
// every other tool the tool alone.
func Suggest(c Call) string {
	if c.Tool != "bash" {
		return Rule{Tool: c.Tool}.String()
	}
	cmd, ok := c.arg("command")
	if !ok {
		return Rule{Tool: c.Tool}.String()
	}
	parts, _ := splitCommand(cmd)
	if len(parts) != 1 {
		return Rule{Tool: c.Tool}.String()
	}
	words := strings.Fields(parts[0])
	if len(words) == 0 || strings.ContainsAny(words[0], "=*") {
		return Rule{Tool: c.Tool}.String()
	}
	prefix := words[0]
	if len(words) > 1 && subcommand(words[1]) {
		prefix += " " + words[1]
	}
	return Rule{Tool: "bash", Pattern: prefix + " *"}.String()
}

// subcommand reports whether w looks like a subcommand (`test`, `run`,
// `commit`) rather than an option or a path.
func subcommand(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}
