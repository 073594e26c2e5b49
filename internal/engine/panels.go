package engine

import (
	"slices"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// Panels. An extension's slash command may open a panel: a small view of
// lines the extension draws and the user drives with keys. The session
// keeps what each open panel shows, so that every door shows the same
// ones and a client that attaches later (ACP's session/load) can be
// shown them: a panel opens with the answer of RunCommand, is redrawn by
// its extension's panel_render notices, and ends with a panel_close
// (its extension's, ClosePanel's, or zot's when the extension stops).
// PanelKey and ClosePanel reach its extension.

// OpenPanel is a panel open in the session, as last drawn.
type OpenPanel struct {
	// Extension is the extension that draws it.
	Extension string
	// Panel is what it shows.
	Panel wire.Panel
}

// panelState is the session's open panels, by id, in the order they
// opened.
type panelState struct {
	mu   sync.Mutex
	open []OpenPanel
}

// Panels returns the session's open panels, in the order they opened.
func (s *Session) Panels() []OpenPanel {
	s.panels.mu.Lock()
	defer s.panels.mu.Unlock()
	return slices.Clone(s.panels.open)
}

// opened records a panel a command's answer opened.
func (p *panelState) opened(ext string, panel wire.Panel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	panel.Lines = slices.Clone(panel.Lines)
	if i := p.index(panel.ID); i >= 0 {
		p.open[i] = OpenPanel{Extension: ext, Panel: panel}
		return
	}
	p.open = append(p.open, OpenPanel{Extension: ext, Panel: panel})
}

// index returns the place of panel id in p.open, or -1. The caller holds
// p.mu.
func (p *panelState) index(id string) int {
	return slices.IndexFunc(p.open, func(o OpenPanel) bool { return o.Panel.ID == id })
}

// observe keeps the open panels true to the session's events: a
// panel_render redraws one, a panel_close ends one. It is a session
// observer: called with the stamping lock held, it only takes its own.
func (p *panelState) observe(ev wire.Event) {
	switch e := ev.(type) {
	case *wire.PanelRenderEvent:
		p.mu.Lock()
		defer p.mu.Unlock()
		if i := p.index(e.PanelID); i >= 0 {
			p.open[i].Panel = wire.Panel{ID: e.PanelID, Title: e.Title, Lines: slices.Clone(e.Lines), Footer: e.Footer}
		}
	case *wire.PanelCloseEvent:
		p.mu.Lock()
		defer p.mu.Unlock()
		if i := p.index(e.PanelID); i >= 0 {
			p.open = slices.Delete(p.open, i, i+1)
		}
	}
}
