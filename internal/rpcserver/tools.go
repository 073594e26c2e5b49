package rpcserver

import (
	"time"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// rpcClient is the name zot rpc's one client registers its tools under.
const rpcClient = "rpc"

// dispatchTools answers the client tool commands (register_tools,
// unregister_tools, client_tool_result); it reports whether cmd was one.
// The calls reach the client as client_tool_call events of the work.
func (s *Server) dispatchTools(cmd wire.Command, id wire.ID, typ string) bool {
	switch c := cmd.(type) {
	case *wire.RegisterToolsCommand:
		list := make([]engine.ClientTool, len(c.Tools))
		for i, t := range c.Tools {
			list[i] = engine.ClientTool{Name: t.Name, Description: t.Description, Schema: t.Schema, ReadOnly: t.ReadOnly != nil && *t.ReadOnly}
			if t.TimeoutMs != nil {
				list[i].Timeout = time.Duration(*t.TimeoutMs) * time.Millisecond
			}
		}
		names, err := s.sess.RegisterClientTools(rpcClient, list, nil)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.ToolsResult{Tools: names})
	case *wire.UnregisterToolsCommand:
		names, err := s.sess.UnregisterClientTools(rpcClient, c.Names)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.ToolsResult{Tools: names})
	case *wire.ClientToolResultCommand:
		var res tools.Result
		if c.Text != "" {
			res.Content = append(res.Content, &llm.TextBlock{Text: c.Text})
		}
		for i, img := range c.Images {
			data, err := images.DecodeBase64(img.Data)
			var b llm.ImageBlock
			if err == nil {
				b, err = images.Check(img.MIMEType, data)
			}
			if err != nil {
				s.fail(id, typ, wire.CodeInvalidImage, "images[%d]: %s", i, oneLine(err))
				return true
			}
			res.Content = append(res.Content, &b)
		}
		res.IsError = c.IsError != nil && *c.IsError
		if err := s.sess.AnswerClientTool(c.CallID, res); err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, nil)
	default:
		return false
	}
	return true
}
