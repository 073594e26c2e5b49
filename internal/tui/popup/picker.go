package popup

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Picker is a list with a title and a filter line, for choosing one of
// many: a model (/model), a session (/sessions, --resume). Typing filters;
// up and down (ctrl+p, ctrl+n), page up and down, home and end move;
// backspace and ctrl+u edit the filter; enter answers Choose with the
// selected item, esc and ctrl+c answer Cancel. The app closes the picker
// on either.
type Picker struct {
	List
	// Title is the first line ("Switch model").
	Title string
	// Hint is the last line ("enter switch · esc cancel"); a default when
	// empty.
	Hint string
	// EmptyText is shown when no item matches ("no sessions in this
	// folder"); a default when empty.
	EmptyText string
	filter    []rune
}

// NewPicker returns a picker of items, the first selected.
func NewPicker(title string, items []Item) *Picker {
	p := &Picker{Title: title}
	p.Rows = 10
	p.SetItems(items)
	return p
}

// Filter is what was typed.
func (p *Picker) Filter() string { return string(p.filter) }

// Update handles a key or a paste; see Picker for the keys.
func (p *Picker) Update(msg tea.Msg) (Action, Item) {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		p.typed(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, msg.Content))
		return Moved, Item{}
	case tea.KeyPressMsg:
		switch msg.Keystroke() {
		case "up", "ctrl+p":
			p.Move(-1)
		case "down", "ctrl+n":
			p.Move(1)
		case "pgup":
			p.Page(-1)
		case "pgdown":
			p.Page(1)
		case "home":
			p.Page(-p.Len())
		case "end":
			p.Page(p.Len())
		case "backspace", "ctrl+h":
			if len(p.filter) > 0 {
				p.filter = p.filter[:len(p.filter)-1]
				p.SetQuery(string(p.filter))
			}
		case "ctrl+u":
			p.filter = nil
			p.SetQuery("")
		case "enter":
			if it, ok := p.Selected(); ok {
				return Choose, it
			}
		case "esc", "ctrl+c":
			return Cancel, Item{}
		default:
			if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
				p.typed(msg.Text)
				break
			}
			return None, Item{}
		}
		return Moved, Item{}
	}
	return None, Item{}
}

func (p *Picker) typed(s string) {
	p.filter = append(p.filter, []rune(s)...)
	p.SetQuery(string(p.filter))
}

// View draws the title with the filter, the list, and the hint, in width
// cells.
func (p *Picker) View(width int) string {
	st := p.styles()
	var b strings.Builder
	head := st.Title.Render(ansi.Truncate(p.Title, width, "…"))
	if len(p.filter) > 0 || p.Len() < len(p.Items()) {
		head += st.Filter.Render(ansi.Truncate("  filter: "+string(p.filter), max(width-ansi.StringWidth(p.Title), 0), "…"))
	}
	b.WriteString(head)
	b.WriteByte('\n')
	if list := p.List.View(width); list != "" {
		b.WriteString(list)
	} else {
		empty := p.EmptyText
		if empty == "" {
			empty = "nothing matches"
			if len(p.Items()) == 0 {
				empty = "nothing to pick"
			}
		}
		b.WriteString(st.Empty.Render("  " + empty))
	}
	b.WriteByte('\n')
	hint := p.Hint
	if hint == "" {
		hint = "type to filter · ↑/↓ choose · enter pick · esc cancel"
		if p.ASCII {
			hint = "type to filter - up/down choose - enter pick - esc cancel"
		}
	}
	b.WriteString(st.Description.Render(ansi.Truncate(hint, width, "…")))
	return b.String()
}
