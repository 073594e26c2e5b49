package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestHelpTextNotIndented: no command's usage or description has a line
// that starts with a tab. A raw string moved one level deeper in the
// source keeps its lines as written, so re-indenting the code around
// one indents the help the user reads (`zot models --help`).
func TestHelpTextNotIndented(t *testing.T) {
	t.Setenv("ZOT_HOME", t.TempDir())
	root := newCLI(streams{}, []string{"zot"}, "")
	var walk func(path string, c *cli.Command)
	walk = func(path string, c *cli.Command) {
		for field, text := range map[string]string{"Usage": c.Usage, "UsageText": c.UsageText, "Description": c.Description} {
			for i, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "\t") {
					t.Errorf("%s: %s line %d starts with a tab: %q", path, field, i+1, line)
				}
			}
		}
		for _, sub := range c.Commands {
			walk(path+" "+sub.Name, sub)
		}
	}
	walk("zot", root)
}
