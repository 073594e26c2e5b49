// Package sysprompt builds the system prompt zot sends with every model
// call: an identity (zot's own, or the one the user gives), the tools of the
// session one line each, the project's instructions, the skills the model
// may load (names and descriptions), text the user appends, and the facts a coding
// agent needs about where and when it runs (today's date in UTC and the
// absolute working directory).
//
// The agent asks for the prompt at every model call, so a long-lived
// process never sends a stale date; [Builder] makes that call cheap.
package sysprompt

import (
	"path/filepath"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/tools"
)

// Options says what goes into the system prompt.
type Options struct {
	// Override, when not blank, replaces zot's built-in identity and
	// working guidelines (--system-prompt). The tool list, appended text,
	// date and working directory are still added.
	Override string
	// Append is added after the identity and the tool list
	// (--append-system-prompt); blank means nothing.
	Append string
	// CWD is the working directory of the tools. A relative path is made
	// absolute; empty means the process's working directory.
	CWD string
	// Tools are the tools the model may call, listed by name with the
	// first sentence of their description.
	Tools []tools.Tool
	// Instructions are the project's instructions (AGENTS.md files, see
	// internal/instructions), added after the tool list; blank means
	// none.
	Instructions string
	// Skills are listed by name and description after the instructions,
	// for the model to load with the skill tool; none means no list.
	Skills []Skill
	// Now gives the current time; nil means time.Now. The date is shown
	// in UTC.
	Now func() time.Time
}

// Skill is one skill the model may load.
type Skill struct {
	Name, Description string
}

// identity is zot's built-in identity and working guidelines.
const identity = `You are zot, a coding agent. You work in the user's project through tools: you read and search code, edit files and run commands to get the task done, then report what you did.

How to work:
- Look before you change anything: read the files involved and search for related code.
- Change existing files with edit and create new ones with write; do not write files through shell redirection.
- After a change, run the project's build or tests when you can, and fix what you broke.
- Do what was asked and no more. Ask when a request is ambiguous and a wrong guess would be costly.
- Be concise. When you finish, say in a few lines what changed and what is left.`

// dateLayout is how the date is shown.
const dateLayout = "2006-01-02"

// Build returns the system prompt for o.
func Build(o Options) string { return Builder(o)() }

// Builder returns a function that gives the system prompt for o each time
// it is called. Everything but the date is worked out once, here; while
// the date stays the same, the function returns the same string without
// building it again. The function is safe for concurrent use.
func Builder(o Options) func() string {
	var b strings.Builder
	if id := strings.TrimSpace(o.Override); id != "" {
		b.WriteString(id)
	} else {
		b.WriteString(identity)
	}
	b.WriteString("\n\n")
	writeTools(&b, o.Tools)
	if text := strings.TrimSpace(o.Instructions); text != "" {
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	writeSkills(&b, o.Skills)
	if extra := strings.TrimSpace(o.Append); extra != "" {
		b.WriteString("\n\n")
		b.WriteString(extra)
	}
	b.WriteString("\n\nCurrent date (UTC): ")
	head := b.String()
	tail := "\nCurrent working directory: " + absDir(o.CWD) + "\n"
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var (
		mu          sync.Mutex
		day, prompt string
	)
	return func() string {
		var buf [16]byte
		d := now().UTC().AppendFormat(buf[:0], dateLayout)
		mu.Lock()
		defer mu.Unlock()
		if prompt == "" || string(d) != day {
			day = string(d)
			prompt = head + day + tail
		}
		return prompt
	}
}

// MaxSkillDescriptions bounds the skills' lines in the system prompt:
// past it, the remaining skills are listed by name only.
const MaxSkillDescriptions = 16 << 10

// writeSkills lists the skills, one line each; past MaxSkillDescriptions
// bytes of lines, the rest by name on one line.
func writeSkills(b *strings.Builder, list []Skill) {
	if len(list) == 0 {
		return
	}
	b.WriteString("\n\nSkills: each is a folder of instructions (and maybe scripts and references) for one kind of task. " +
		"When a task matches a skill's description, call the skill tool with its name to load its instructions before you start.")
	used := 0
	for i, sk := range list {
		line := "\n- " + sk.Name + ": " + strings.Join(strings.Fields(sk.Description), " ")
		if used+len(line) > MaxSkillDescriptions {
			names := make([]string, 0, len(list)-i)
			for _, rest := range list[i:] {
				names = append(names, rest.Name)
			}
			b.WriteString("\n- and, without their descriptions (load one to read it): ")
			b.WriteString(strings.Join(names, ", "))
			return
		}
		used += len(line)
		b.WriteString(line)
	}
}

// writeTools lists the tools, one line each.
func writeTools(b *strings.Builder, list []tools.Tool) {
	if len(list) == 0 {
		b.WriteString("No tools are available in this session: answer from the conversation alone.")
		return
	}
	b.WriteString("Tools available:")
	for _, t := range list {
		b.WriteString("\n- ")
		b.WriteString(t.Name())
		if s := FirstSentence(t.Description()); s != "" {
			b.WriteString(": ")
			b.WriteString(s)
		}
	}
}

// FirstSentence returns the first sentence of s on one line: the text up to
// and including the first period that is followed by white space or the
// end and is not inside parentheses. Without such a period it returns all
// of s. Runs of white space become one space.
func FirstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case '.':
			if depth == 0 && (i+1 == len(s) || s[i+1] == ' ') {
				return s[:i+1]
			}
		}
	}
	return s
}

// absDir returns dir as an absolute, cleaned path.
func absDir(dir string) string {
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}

// Changes describes, for the model, what differs between two system
// prompts built by [Builder]: the date, the tools, the working directory;
// and when anything else differs, the whole new prompt. It is how a
// conversation whose system prompt must stay as it was (a model that
// binds its thinking to it) learns what changed since. It returns "" when
// the prompts are equal.
func Changes(was, now string) string {
	if was == now {
		return ""
	}
	oldParts, newParts := parts(was), parts(now)
	var out []string
	if oldParts.date != newParts.date {
		out = append(out, "Current date (UTC): "+newParts.date+".")
	}
	if oldParts.tools != newParts.tools {
		out = append(out, "The tools changed. "+newParts.tools)
	}
	if oldParts.cwd != newParts.cwd {
		out = append(out, "Current working directory: "+newParts.cwd+".")
	}
	if oldParts.rest != newParts.rest || len(out) == 0 {
		return "The instructions changed. They now read:\n\n" + now
	}
	return strings.Join(out, "\n")
}

// promptParts are the parts of a built system prompt that change while a
// session runs.
type promptParts struct{ date, tools, cwd, rest string }

// parts splits a prompt built by Builder into its changing parts; what is
// not recognised stays in rest.
func parts(p string) promptParts {
	var out promptParts
	var rest []string
	inTools := false
	for line := range strings.SplitSeq(p, "\n") {
		switch {
		case strings.HasPrefix(line, "Current date (UTC): "):
			out.date = strings.TrimPrefix(line, "Current date (UTC): ")
			inTools = false
		case strings.HasPrefix(line, "Current working directory: "):
			out.cwd = strings.TrimPrefix(line, "Current working directory: ")
			inTools = false
		case line == "Tools available:" || strings.HasPrefix(line, "No tools are available"):
			out.tools = line
			inTools = line == "Tools available:"
		case inTools && strings.HasPrefix(line, "- "):
			out.tools += "\n" + line
		default:
			inTools = false
			rest = append(rest, line)
		}
	}
	out.rest = strings.Join(rest, "\n")
	return out
}
