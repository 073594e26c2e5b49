package popup

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// Commands is the `/` completion popup. The app tells it the input after
// every edit (SetInput); it opens while the input is a "/" and a command
// name being typed, filtered by what follows the "/", and closes when the
// input is anything else or nothing matches.
//
// While it is open the app hands it keys first: up and down (ctrl+p,
// ctrl+n) move, tab answers Complete (the app puts "/name " in the input),
// enter answers Choose (the app runs the command), esc answers Cancel (it
// stays closed until the input changes). Every other key answers None and
// goes to the input.
type Commands struct {
	List
	open      bool
	input     string
	dismissed string
}

// NewCommands returns a closed popup of items; each Name is a command with
// its "/" ("/model"), built-ins first, then extensions' with Group set.
func NewCommands(items []Item) *Commands {
	c := &Commands{}
	c.NamesOnly = true
	c.SetItems(items)
	return c
}

// SetInput opens, filters or closes the popup for the input text.
func (c *Commands) SetInput(text string) {
	if text == c.input && (c.open || text == c.dismissed) {
		return
	}
	c.input = text
	if text != c.dismissed {
		c.dismissed = ""
	}
	c.filter()
}

// SetItems replaces the commands: an input typed before they came may
// match one now (an extension's, listed once it started).
func (c *Commands) SetItems(items []Item) {
	c.List.SetItems(items)
	c.filter()
}

// filter opens the popup, filtered, when the input is a command being
// typed that some command matches; else closes it.
func (c *Commands) filter() {
	name, ok := strings.CutPrefix(c.input, "/")
	if !ok || strings.IndexFunc(name, unicode.IsSpace) >= 0 || c.dismissed != "" {
		c.open = false
		return
	}
	c.SetQuery(name)
	c.open = c.Len() > 0
}

// Open says whether the popup shows.
func (c *Commands) Open() bool { return c.open }

// Close closes it until the input changes.
func (c *Commands) Close() {
	c.open = false
	c.dismissed = c.input
}

// Update handles a key while the popup is open; see Commands for what each
// answers. The item is the selected one for Complete and Choose.
func (c *Commands) Update(msg tea.Msg) (Action, Item) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !c.open {
		return None, Item{}
	}
	switch k.Keystroke() {
	case "up", "ctrl+p":
		c.Move(-1)
		return Moved, Item{}
	case "down", "ctrl+n":
		c.Move(1)
		return Moved, Item{}
	case "pgup":
		c.Page(-1)
		return Moved, Item{}
	case "pgdown":
		c.Page(1)
		return Moved, Item{}
	case "tab":
		it, _ := c.Selected()
		c.open = false
		c.input = it.Name + " "
		return Complete, it
	case "enter":
		it, _ := c.Selected()
		c.open = false
		return Choose, it
	case "esc":
		c.Close()
		return Cancel, Item{}
	}
	return None, Item{}
}

// View draws the popup (empty while closed).
func (c *Commands) View(width int) string {
	if !c.open {
		return ""
	}
	return c.List.View(width)
}
