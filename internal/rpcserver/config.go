package rpcserver

import (
	"encoding/json"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// configResult is the answer of the config commands: the defaults now.
func configResult(d engine.Defaults) wire.ConfigResult {
	return wire.ConfigResult{Config: engine.WireDefaults(d)}
}

// setConfig sets the session's defaults to d and answers with them.
func (s *Server) setConfig(id wire.ID, typ string, d engine.Defaults) {
	if err := s.sess.SetDefaults(d); err != nil {
		s.failErr(id, typ, err)
		return
	}
	s.respond(id, typ, configResult(s.sess.Defaults()))
}

// patchConfig merges patch (RFC 7396) into the session's defaults as
// get_config shows them, and sets the result.
func (s *Server) patchConfig(id wire.ID, typ string, patch json.RawMessage) {
	if err := s.sess.PatchDefaults(patch); err != nil {
		s.failErr(id, typ, err)
		return
	}
	s.respond(id, typ, configResult(s.sess.Defaults()))
}

// capabilities is the answer to get_capabilities.
func (s *Server) capabilities() wire.CapabilitiesResult {
	c := engine.Capabilities(s.sess.Provider())
	c.Limits.MaxLineBytes = int64(s.opts.MaxLineBytes)
	return c
}
