package acpserver

import (
	"errors"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// Panels. An extension's command may open a panel; the engine keeps the
// session's open panels, and this door tells every client of the session
// about them with _zot/panel/opened, _zot/panel/rendered and
// _zot/panel/closed notifications, and takes their keys and closes with
// the _zot/panel/key and _zot/panel/close requests (schema/daemon). A
// client that opens the session later is told the panels open then.

// panelFrame is a panel in its ACP form.
func panelFrame(ext string, p wire.Panel) acp.PanelFrame {
	f := acp.PanelFrame{PanelID: p.ID, Extension: ext, Lines: p.Lines}
	if f.Lines == nil {
		f.Lines = []string{}
	}
	if p.Title != "" {
		f.Title = &p.Title
	}
	if p.Footer != "" {
		f.Footer = &p.Footer
	}
	return f
}

// openPanel tells every client of the session (or only, when set) that a
// panel is open.
func (s *acpSession) openPanel(ext string, p wire.Panel, only *conn) {
	s.push(item{note: acp.ZotPanelOpenedNotification{SessionID: s.id, Panel: panelFrame(ext, p)}, method: acp.MethodZotPanelOpened, only: only})
}

// tellPanels tells c the panels open in the session.
func (s *acpSession) tellPanels(c *conn) {
	for _, o := range s.eng.Panels() {
		s.openPanel(o.Extension, o.Panel, c)
	}
}

// panelNotice turns a panel's redraw or close, pushed by its extension
// (or by a close), into its notification; it reports whether ev was one.
// It is called with the engine's stamping lock held, so it only queues;
// a client that is behind does not get it (the schema lets it be
// dropped).
func (s *acpSession) panelNotice(ev wire.Event) bool {
	switch e := ev.(type) {
	case *wire.PanelRenderEvent:
		p := wire.Panel{ID: e.PanelID, Title: e.Title, Lines: e.Lines, Footer: e.Footer}
		s.push(item{note: acp.ZotPanelRenderedNotification{SessionID: s.id, Panel: panelFrame(e.Extension, p)}, method: acp.MethodZotPanelRendered, droppable: true})
		return true
	case *wire.PanelCloseEvent:
		s.push(item{note: acp.ZotPanelClosedNotification{SessionID: s.id, PanelID: e.PanelID, Extension: e.Extension}, method: acp.MethodZotPanelClosed, droppable: true})
		return true
	}
	return false
}

// panelKey serves _zot/panel/key: the key goes to the panel's extension.
func (h *conn) panelKey(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.ZotPanelKeyRequest
	if err := decode(req, &p, "sessionId", "panelId", "key"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	text := ""
	if p.Text != nil {
		text = *p.Text
	}
	if err := s.eng.PanelKey(p.PanelID, extwire.KeyName(p.Key), text); err != nil {
		return jsonrpc.Fail(panelError(s, err))
	}
	return jsonrpc.Result(acp.ZotPanelKeyResponse{})
}

// panelClose serves _zot/panel/close: the panel's extension is told, and
// every client of the session gets _zot/panel/closed.
func (h *conn) panelClose(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.ZotPanelCloseRequest
	if err := decode(req, &p, "sessionId", "panelId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	owner, err := s.eng.ClosePanel(p.PanelID)
	if err != nil {
		return jsonrpc.Fail(panelError(s, err))
	}
	s.eng.Notice(&wire.PanelCloseEvent{Extension: owner, PanelID: p.PanelID})
	return jsonrpc.Result(acp.ZotPanelCloseResponse{})
}

// panelError is the answer to a panel request that failed: a panel not
// open, or a key the protocol does not have, is the client's mistake.
func panelError(s *acpSession, err error) *jsonrpc.Error {
	if errors.Is(err, engine.ErrUnknownKey) {
		return withSession(jsonrpc.InvalidParams("key", "%v", err), s.id)
	}
	if wire.CodeOf(err) == wire.CodeNotFound {
		return withSession(jsonrpc.InvalidParams("panelId", "%v", err), s.id)
	}
	return s.agent.errorOf(err, s.id, "")
}
