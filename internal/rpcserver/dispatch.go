package rpcserver

import (
	"context"
	"fmt"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/settings"
	"zot.dev/zot/sdk/wire"
)

// dispatch answers one valid, authorised command, whose id and type
// handle has read.
func (s *Server) dispatch(cmd wire.Command, id wire.ID, typ string) {
	switch c := cmd.(type) {
	case *wire.HelloCommand:
		if c.ProtocolVersion != nil && *c.ProtocolVersion > engine.ProtocolVersion {
			// Served all the same: the client learns the server's version
			// from the answer and does without what this server lacks.
			fmt.Fprintf(s.opts.Log, "zot: the client speaks protocol %d, this zot %d; serving it with %d\n", *c.ProtocolVersion, engine.ProtocolVersion, engine.ProtocolVersion)
		}
		res := wire.HelloResult{
			ProtocolVersion: engine.ProtocolVersion,
			Version:         buildinfo.Version(),
			Provider:        s.sess.Provider(),
			Model:           s.sess.Model(),
		}
		if c.ChildEvents != nil {
			// Asked for (or declined) from now on; the answer says so.
			s.childEvents.Store(*c.ChildEvents)
			if *c.ChildEvents {
				res.ChildEvents = c.ChildEvents
			}
		}
		s.respond(id, typ, res)
	case *wire.PingCommand:
		s.respond(id, typ, wire.PingResult{Pong: true})
	case *wire.PromptCommand:
		blocks := make([]llm.ImageBlock, 0, len(c.Images))
		for i, img := range c.Images {
			data, err := images.DecodeBase64(img.Data)
			if err == nil {
				var b llm.ImageBlock
				if b, err = images.Check(img.MIMEType, data); err == nil {
					blocks = append(blocks, b)
				}
			}
			if err != nil {
				s.fail(id, typ, wire.CodeInvalidImage, "images[%d]: %s", i, oneLine(err))
				return
			}
		}
		if c.Message == "" && len(blocks) == 0 {
			s.fail(id, typ, wire.CodeInvalidParams, "prompt: message is empty and there are no images")
			return
		}
		in := &engine.PromptInput{Text: c.Message, Images: blocks}
		if len(c.OutputSchema) > 0 { // without a schema there is nothing to set
			if err := in.SetOutput(c.OutputSchema, c.OutputRetries); err != nil {
				s.fail(id, typ, wire.CodeInvalidParams, "prompt: %s", oneLine(err))
				return
			}
		}
		if c.Model != "" || c.Reasoning != "" || c.MaxSteps != nil || c.MaxTokens != nil || c.MaxCostUSD != nil {
			var level *string
			if c.Reasoning != "" {
				level = &c.Reasoning
			}
			if err := in.SetOverrides(c.Model, level, c.MaxSteps, c.MaxTokens, c.MaxCostUSD); err != nil {
				s.fail(id, typ, wire.CodeInvalidParams, "prompt: %s", oneLine(err))
				return
			}
		}
		w := engine.Work{ID: id, Prompt: in}
		w.Traceparent, w.Tracestate = engine.TraceContextOf(c.Meta)
		s.submit(id, typ, w)
	case *wire.CompactCommand:
		s.submit(id, typ, engine.Work{ID: id, Compact: &engine.CompactInput{Instructions: c.Instructions}})
	case *wire.AbortCommand:
		// The answer is written before the work is cancelled, under the
		// lock that orders endings: the aborted work's ending and the
		// dropped work's endings always follow it.
		answer := func(res wire.AbortResult) { s.respond(id, typ, res) }
		switch all := c.All != nil && *c.All; {
		case c.PromptID.IsZero():
			s.sess.Abort(all, answer)
		case all:
			s.fail(id, typ, wire.CodeInvalidParams, "abort: all and prompt_id do not go together")
		default:
			s.sess.AbortWork(c.PromptID, answer)
		}
	case *wire.GetStateCommand:
		s.respond(id, typ, s.sess.State())
	case *wire.GetMessagesCommand:
		s.respond(id, typ, wire.MessagesResult{Messages: nonNilMessages(s.sess.Messages())})
	case *wire.ClearCommand:
		if err := s.sess.Clear(); err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, nil)
	case *wire.SetModelCommand:
		var level *string
		if c.Reasoning != "" {
			l := c.Reasoning
			if l == "default" {
				l = ""
			}
			level = &l
		}
		if err := s.sess.SetModelReasoning(c.Model, level); err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, wire.SetModelResult{Model: s.sess.Model(), Reasoning: wire.ReasoningLevel(s.sess.Reasoning())})
	case *wire.SetModeCommand:
		if err := s.sess.SetMode(c.Mode); err != nil {
			s.failErr(id, typ, err) // invalid_params for a mode the session does not offer
			return
		}
		s.respond(id, typ, modeResult(s.sess))
	case *wire.SetSandboxCommand:
		network := ""
		if c.Network != nil {
			network = onOff(*c.Network)
		}
		if err := s.sess.SetSandbox(c.Mode, network); err != nil {
			s.failErr(id, typ, err) // invalid_params
			return
		}
		s.respond(id, typ, s.sess.Sandbox())
	case *wire.GetModelsCommand:
		s.respond(id, typ, wire.ModelsResult{Models: s.sess.Models()})
	case *wire.GetCapabilitiesCommand:
		s.respond(id, typ, s.capabilities())
	case *wire.GetConfigCommand:
		s.respond(id, typ, configResult(s.sess.Defaults()))
	case *wire.SetConfigCommand:
		s.setConfig(id, typ, engine.DefaultsOf(c.Config))
	case *wire.PatchConfigCommand:
		s.patchConfig(id, typ, c.Patch)
	case *wire.UndoCommand:
		turn := 0
		if c.Turn != nil {
			turn = int(*c.Turn)
		}
		res, err := s.sess.Undo(turn)
		if err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, res)
	case *wire.ListSkillsCommand:
		s.respond(id, typ, s.sess.SkillList())
	case *wire.ListAgentsCommand:
		s.respond(id, typ, s.sess.AgentList())
	case *wire.GetSkillCommand:
		res, err := s.sess.GetSkill(c.Name, c.File)
		if err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, res)
	case *wire.AnswerPermissionCommand:
		ans := engine.Approval{Decision: engine.Reject, Reason: c.Reason, Save: settings.Scope(c.Save), Rule: c.Rule}
		switch c.Decision {
		case wire.PermissionDecisionAllowOnce:
			ans.Decision = engine.AllowOnce
		case wire.PermissionDecisionAllowAlways:
			ans.Decision = engine.AllowAlways
		}
		if err := s.sess.AnswerApproval(c.RequestID, ans); err != nil {
			s.failErr(id, typ, err)
			return
		}
		s.respond(id, typ, nil)
	default:
		if s.dispatchExtension(cmd) || s.dispatchMCP(cmd) || s.dispatchSessions(cmd) || s.dispatchTools(cmd, id, typ) || s.dispatchSteer(cmd, id, typ) {
			return
		}
		s.fail(id, typ, wire.CodeUnknownCommand, "unknown command %q", typ)
	}
}

// submit queues a prompt or compaction. Its answer (started, or queued at
// a position) is written before any of its events.
func (s *Server) submit(id wire.ID, typ string, w engine.Work) {
	w.Sink = s.sink
	// Before each event the work waits for room in the output (while it
	// is not aborted), so a client that reads slowly slows the agent
	// down instead of growing the queue.
	w.Ready = s.w.Ready
	err := s.sess.Submit(w, engine.Queue, func(res wire.StartResult) { s.respond(id, typ, res) })
	if err != nil {
		s.failErr(id, typ, err)
	}
}

// sink writes the events of work; it never blocks.
// A sub-agent's events reach only a client whose hello asked for them.
func (s *Server) sink(_ context.Context, ev wire.Event) {
	if _, child := ev.(*wire.ChildEvent); child && !s.childEvents.Load() {
		return
	}
	s.w.Send(ev)
}

// modeResult is the answer to set_mode: the mode and those offered.
func modeResult(sess *engine.Session) wire.SetModeResult {
	offered := sess.Modes()
	res := wire.SetModeResult{Mode: sess.Mode(), Modes: make([]wire.PermissionMode, len(offered))}
	for i, m := range offered {
		res.Modes[i] = m.ID
	}
	return res
}

func nonNilMessages(m []wire.Message) []wire.Message {
	if m == nil {
		return []wire.Message{}
	}
	return m
}

// failErr answers a failed command with the code of its error
// (wire.CodeOf).
func (s *Server) failErr(id wire.ID, typ string, err error) {
	code := wire.CodeOf(err)
	if code == wire.CodeBusy {
		s.fail(id, typ, code, "%s: a prompt or compact is running or queued", typ)
		return
	}
	s.fail(id, typ, code, "%s", oneLine(err))
}

// onOff names a switch as the sandbox's network setting does.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
