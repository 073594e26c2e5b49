// Package popup is the terminal client's lists: the `/` completion popup
// of commands (Commands) and a picker with a filter line (Picker) for
// /model, /sessions and the --resume list. Both are a List: items filtered
// by a query, one selected, a window of rows that follows the selection.
//
// The app owns the keys: it hands a key to the open popup or picker first
// (Update), and acts on the Action it answers with. Neither draws a border;
// the app places View's rows above the input.
package popup

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/tui/render"
)

// Item is one row.
type Item struct {
	// Name is matched against the query and shown first ("/model", a model
	// id, a session's title).
	Name string
	// Description is shown dimmed after the name, and matched too, below
	// every name match.
	Description string
	// Group names the section the item belongs to ("extensions"): a divider
	// with it comes before the first item of a group that differs from the
	// one above. Empty for none.
	Group string
	// Value is carried back unchanged when the item is chosen.
	Value any
}

// Action is what a key did.
type Action int

// The actions.
const (
	// None: the key was not the list's; the app handles it.
	None Action = iota
	// Moved: the selection moved, or the query changed; redraw.
	Moved
	// Complete: tab on an item: put its name in the input, keep editing.
	Complete
	// Choose: enter on an item: run it, or pick it.
	Choose
	// Cancel: esc: close the list.
	Cancel
)

// String names the action (for tests and logs).
func (a Action) String() string {
	return [...]string{"none", "moved", "complete", "choose", "cancel"}[a]
}

// Styles are how a list draws its parts.
type Styles struct {
	Title, Filter, Name, Description, Selected, Group, Empty, More lipgloss.Style
}

// DefaultStyles are the lists' colours; with NO_COLOR the program's
// renderer drops the colours and keeps reverse video for the selection.
func DefaultStyles() *Styles {
	return &Styles{
		Title:       lipgloss.NewStyle().Bold(true),
		Filter:      lipgloss.NewStyle(),
		Name:        lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		Description: lipgloss.NewStyle().Faint(true),
		Selected:    lipgloss.NewStyle().Reverse(true),
		Group:       lipgloss.NewStyle().Faint(true),
		Empty:       lipgloss.NewStyle().Faint(true),
		More:        lipgloss.NewStyle().Faint(true),
	}
}

// List is items filtered by a query, with a selection and a window of at
// most Rows rows. The zero List is empty; set its items with SetItems.
type List struct {
	// Rows is how many items show at once (8 when zero).
	Rows int
	// ASCII draws the divider with "-" in place of "─", for terminals
	// without line drawing.
	ASCII bool
	// Styles, DefaultStyles when nil.
	Styles *Styles
	// NamesOnly matches the query against names alone, not descriptions
	// (the / popup: "/he" is /help, not every command whose description
	// says "the").
	NamesOnly bool

	items []Item
	query string
	shown []int // indexes into items, best match first
	sel   int   // index into shown
	top   int   // first index of shown in the window
}

// SetItems replaces the items, keeping the query, and selects the first
// match.
func (l *List) SetItems(items []Item) {
	l.items = items
	l.refilter()
}

// Items are all the items, filtered or not.
func (l *List) Items() []Item { return l.items }

// SetQuery filters by q; the first match is selected.
func (l *List) SetQuery(q string) {
	if q == l.query && l.shown != nil {
		return
	}
	l.query = q
	l.refilter()
}

// Query is the current query.
func (l *List) Query() string { return l.query }

// Len is the number of items that match.
func (l *List) Len() int { return len(l.shown) }

// Selected is the selected item; ok is false when nothing matches.
func (l *List) Selected() (Item, bool) {
	if len(l.shown) == 0 {
		return Item{}, false
	}
	return l.items[l.shown[l.sel]], true
}

// Select selects the first match for which f is true (the current model in
// a /model picker, say); it reports whether one did.
func (l *List) Select(f func(Item) bool) bool {
	for i, idx := range l.shown {
		if f(l.items[idx]) {
			l.sel = i
			l.follow()
			return true
		}
	}
	return false
}

// Move moves the selection by d rows, wrapping at either end.
func (l *List) Move(d int) {
	if n := len(l.shown); n > 0 {
		l.sel = ((l.sel+d)%n + n) % n
		l.follow()
	}
}

// Page moves the selection by a window's height, stopping at the ends.
func (l *List) Page(d int) {
	if n := len(l.shown); n > 0 {
		l.sel = max(0, min(n-1, l.sel+d*l.rows()))
		l.follow()
	}
}

func (l *List) rows() int {
	if l.Rows <= 0 {
		return 8
	}
	return l.Rows
}

func (l *List) styles() *Styles {
	if l.Styles == nil {
		l.Styles = DefaultStyles()
	}
	return l.Styles
}

func (l *List) follow() {
	if l.sel < l.top {
		l.top = l.sel
	}
	if l.sel >= l.top+l.rows() {
		l.top = l.sel - l.rows() + 1
	}
}

// refilter ranks the items against the query: a name that starts with it,
// then a name with a word that starts with it, then a name that holds it,
// then a name that holds its characters in order, then (unless NamesOnly)
// a description that holds it. Case is ignored; ties keep the items' order.
func (l *List) refilter() {
	q := strings.ToLower(strings.TrimSpace(l.query))
	type hit struct{ idx, score int }
	var hits []hit
	for i, it := range l.items {
		if s := score(it, q, !l.NamesOnly); s >= 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score < hits[b].score })
	l.shown = make([]int, len(hits))
	for i, h := range hits {
		l.shown[i] = h.idx
	}
	l.sel, l.top = 0, 0
}

func score(it Item, q string, descriptions bool) int {
	if q == "" {
		return 0
	}
	name := strings.ToLower(strings.TrimPrefix(it.Name, "/"))
	q = strings.TrimPrefix(q, "/")
	switch {
	case strings.HasPrefix(name, q):
		return 0
	case wordPrefix(name, q):
		return 1
	case strings.Contains(name, q):
		return 2
	case inOrder(name, q):
		return 3
	case descriptions && strings.Contains(strings.ToLower(it.Description), q):
		return 4
	}
	return -1
}

func wordPrefix(s, q string) bool {
	for i := 1; i < len(s); i++ {
		if c := s[i-1]; (c == ' ' || c == '-' || c == '_' || c == '/' || c == '.' || c == ':') && strings.HasPrefix(s[i:], q) {
			return true
		}
	}
	return false
}

func inOrder(s, q string) bool {
	for _, r := range q {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}

// View draws the window of matches in width cells: the name, padded to the
// widest name shown, then the description, cut to fit; the selected row in
// reverse video; a divider at each change of group (while no query
// filters); "… N more" under a window that does not show them all. It is
// empty when nothing matches.
func (l *List) View(width int) string {
	st := l.styles()
	if len(l.shown) == 0 {
		return ""
	}
	end := min(l.top+l.rows(), len(l.shown))
	nameW := 0
	for _, idx := range l.shown[l.top:end] {
		nameW = max(nameW, ansi.StringWidth(render.CleanLine(l.items[idx].Name)))
	}
	nameW = min(nameW, max(width/2, 8))
	var b strings.Builder
	prevGroup := ""
	if l.top > 0 {
		prevGroup = l.items[l.shown[l.top-1]].Group
	}
	for i := l.top; i < end; i++ {
		it := l.items[l.shown[i]]
		if it.Group != prevGroup && it.Group != "" && l.query == "" {
			b.WriteString(st.Group.Render(l.divider(it.Group, width)))
			b.WriteByte('\n')
		}
		prevGroup = it.Group
		// An extension's command, a session's title: shown, never
		// obeyed (render.CleanLine).
		name := ansi.Truncate(render.CleanLine(it.Name), nameW, "…")
		name += strings.Repeat(" ", nameW-ansi.StringWidth(name))
		rest := max(width-nameW-4, 0)
		desc := ""
		if it.Description != "" && rest > 1 {
			desc = ansi.Truncate(render.CleanLine(firstLine(it.Description)), rest, "…")
		}
		if i == l.sel {
			row := "  " + name + "  " + desc
			row += strings.Repeat(" ", max(width-ansi.StringWidth(row), 0))
			b.WriteString(st.Selected.Render(ansi.Truncate(row, width, "")))
		} else {
			b.WriteString("  " + st.Name.Render(name))
			if desc != "" {
				b.WriteString("  " + st.Description.Render(desc))
			}
		}
		b.WriteByte('\n')
	}
	if n := len(l.shown) - end; n > 0 {
		b.WriteString(st.More.Render(fmt.Sprintf("  … %d more", n)))
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (l *List) divider(group string, width int) string {
	rule := "─"
	if l.ASCII {
		rule = "-"
	}
	head := rule + rule + " " + group + " "
	return head + strings.Repeat(rule, max(width-ansi.StringWidth(head), 0))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
