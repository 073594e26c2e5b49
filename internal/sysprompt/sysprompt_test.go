package sysprompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"zot.dev/zot/internal/tools"
)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestBuildDefault(t *testing.T) {
	dir := t.TempDir()
	got := Build(Options{
		CWD:   dir,
		Tools: tools.Builtins(tools.Config{CWD: dir}),
		Now:   fixedClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)),
	})
	for _, want := range []string{
		"You are zot, a coding agent.",
		"Tools available:\n- read: Read a file.\n- write: ",
		"\n- edit: Edit a file by exact text replacement.\n",
		"\n- bash: ",
		"\n- grep: ",
		"\n- find: ",
		"\n- ls: List a directory's entries, sorted by name (default: the working directory).\n",
		"Current date (UTC): 2026-11-23\n",
		"Current working directory: " + dir + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	// One line per tool: seven tool lines between the header and the footer.
	start := strings.Index(got, "Tools available:\n")
	end := strings.Index(got, "\n\nCurrent date")
	lines := strings.Split(got[start:end], "\n")[1:]
	if len(lines) != 7 {
		t.Errorf("tool lines = %d, want 7: %q", len(lines), lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "- ") || !strings.HasSuffix(l, ".") {
			t.Errorf("tool line %q is not \"- name: sentence.\"", l)
		}
	}
	if !strings.HasSuffix(got, "\n") || strings.HasSuffix(got, "\n\n") {
		t.Errorf("prompt should end with exactly one newline: %q", got[len(got)-20:])
	}
}

func TestBuildOverrideAndAppend(t *testing.T) {
	got := Build(Options{
		Override: "  You are a careful reviewer.  ",
		Append:   "Always answer in French.",
		CWD:      "/srv/project",
		Tools:    tools.Builtins(tools.Config{CWD: t.TempDir()})[:1],
		Now:      fixedClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	})
	want := "You are a careful reviewer.\n\n" +
		"Tools available:\n- read: Read a file.\n\n" +
		"Always answer in French.\n\n" +
		"Current date (UTC): 2026-01-02\n" +
		"Current working directory: /srv/project\n"
	if got != want {
		t.Errorf("Build =\n%q\nwant\n%q", got, want)
	}
}

func TestBuildNoTools(t *testing.T) {
	got := Build(Options{CWD: "/x", Now: fixedClock(time.Unix(0, 0))})
	if !strings.Contains(got, "No tools are available") || strings.Contains(got, "Tools available:") {
		t.Errorf("prompt without tools:\n%s", got)
	}
	if !strings.Contains(got, "You are zot") {
		t.Errorf("blank override must keep the identity:\n%s", got)
	}
}

func TestBuildDateIsUTCAndFresh(t *testing.T) {
	// 23:30 on the 1st in UTC-5 is already the 2nd in UTC.
	zone := time.FixedZone("UTC-5", -5*3600)
	now := time.Date(2026, 3, 1, 23, 30, 0, 0, zone)
	clock := func() time.Time { return now }
	if got := Build(Options{CWD: "/x", Now: clock}); !strings.Contains(got, "Current date (UTC): 2026-03-02\n") {
		t.Errorf("date not in UTC:\n%s", got)
	}
	now = now.Add(48 * time.Hour)
	if got := Build(Options{CWD: "/x", Now: clock}); !strings.Contains(got, "Current date (UTC): 2026-03-04\n") {
		t.Errorf("a later Build must show the later date:\n%s", got)
	}
}

func TestBuildRelativeCWD(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got := Build(Options{CWD: "sub/dir", Now: fixedClock(time.Unix(0, 0))})
	want := "Current working directory: " + filepath.Join(wd, "sub", "dir") + "\n"
	if !strings.Contains(got, want) {
		t.Errorf("prompt lacks %q:\n%s", want, got)
	}
	got = Build(Options{Now: fixedClock(time.Unix(0, 0))})
	if !strings.Contains(got, "Current working directory: "+wd+"\n") {
		t.Errorf("empty CWD should be the process's directory %s:\n%s", wd, got)
	}
}

func TestFirstSentence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Read a file. Text files are returned.", "Read a file."},
		{"Search (Go RE2 syntax. Really) under a dir. More.", "Search (Go RE2 syntax. Really) under a dir."},
		{"No period at all", "No period at all"},
		{"Version 1.2 is fine. Next.", "Version 1.2 is fine."},
		{"  Spread\n  over\tlines.  Next.", "Spread over lines."},
		{"", ""},
	} {
		if got := FirstSentence(c.in); got != c.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBuilderFollowsTheDate checks that one builder gives the same string
// while the date stays and a new one when it changes.
func TestBuilderFollowsTheDate(t *testing.T) {
	clock := time.Date(2026, 11, 23, 23, 59, 0, 0, time.UTC)
	build := Builder(Options{CWD: "/srv", Now: func() time.Time { return clock }})
	first := build()
	clock = clock.Add(30 * time.Second)
	if again := build(); again != first || unsafe.StringData(again) != unsafe.StringData(first) {
		t.Errorf("same day, another prompt was built: %q", again)
	}
	clock = clock.Add(time.Minute)
	next := build()
	if !strings.Contains(next, "Current date (UTC): 2026-11-24\n") || strings.Replace(next, "2026-11-24", "2026-11-23", 1) != first {
		t.Errorf("after midnight:\n%s\nbefore:\n%s", next, first)
	}
	if got := Build(Options{CWD: "/srv", Now: func() time.Time { return clock }}); got != next {
		t.Errorf("Build = %q, want what the builder gives: %q", got, next)
	}
}

// TestChanges: what changed between two prompts of one session is told as
// the date, the tools and the directory; anything else as the whole new
// prompt.
func TestChanges(t *testing.T) {
	day := func(d int) func() time.Time {
		return func() time.Time { return time.Date(2026, 11, d, 23, 0, 0, 0, time.UTC) }
	}
	a := Build(Options{CWD: "/w", Now: day(27)})
	b := Build(Options{CWD: "/w", Now: day(28)})
	if got := Changes(a, a); got != "" {
		t.Errorf("no change: %q", got)
	}
	if got := Changes(a, b); got != "Current date (UTC): 2026-11-28." {
		t.Errorf("date: %q", got)
	}
	c := Build(Options{CWD: "/w", Now: day(28), Override: "You are someone else."})
	if got := Changes(b, c); !strings.HasPrefix(got, "The instructions changed. They now read:") || !strings.Contains(got, "You are someone else.") {
		t.Errorf("other change: %q", got)
	}
}

// TestSkillsList: each skill is a line with its description on one line;
// past the bound the rest are named without theirs.
func TestSkillsList(t *testing.T) {
	got := Build(Options{CWD: "/w", Skills: []Skill{{Name: "a", Description: "Does\n  a."}, {Name: "b", Description: "Does b."}}})
	if !strings.Contains(got, "before you start.\n- a: Does a.\n- b: Does b.\n\nCurrent date") {
		t.Errorf("skills:\n%s", got)
	}
	long := strings.Repeat("x", 1000)
	var many []Skill
	for i := range 40 {
		many = append(many, Skill{Name: fmt.Sprintf("s%02d", i), Description: long})
	}
	got = Build(Options{CWD: "/w", Skills: many})
	if !strings.Contains(got, "\n- s15: "+long+"\n- and, without their descriptions (load one to read it): s16, s17,") || strings.Contains(got, "- s16: ") || !strings.Contains(got, ", s39\n") {
		t.Errorf("many skills: %d bytes:\n%.3000s", len(got), got[strings.Index(got, "- s14"):])
	}
}
