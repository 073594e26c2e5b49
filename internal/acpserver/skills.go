package acpserver

import (
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// skillsList serves _zot/skills/list: the engine's Session.SkillList.
func (h *conn) skillsList(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SkillsListRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	res := s.eng.SkillList()
	out := acp.SkillsListResponse{Skills: make([]acp.SkillInfo, 0, len(res.Skills)), Shadowed: make([]acp.SkillInfo, 0, len(res.Shadowed)),
		Problems: make([]acp.SkillProblem, 0, len(res.Problems)), Tool: res.Tool}
	for _, sk := range res.Skills {
		out.Skills = append(out.Skills, skillInfo(sk))
	}
	for _, sk := range res.Shadowed {
		out.Shadowed = append(out.Shadowed, skillInfo(sk))
	}
	for _, pr := range res.Problems {
		out.Problems = append(out.Problems, acp.SkillProblem{Path: pr.Path, Source: string(pr.Source), Message: pr.Message})
	}
	return jsonrpc.Result(out)
}

// skillsGet serves _zot/skills/get: the engine's Session.GetSkill.
func (h *conn) skillsGet(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SkillsGetRequest
	if err := decode(req, &p, "sessionId", "name"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	file := ""
	if p.File != nil {
		file = *p.File
	}
	res, err := s.eng.GetSkill(p.Name, file)
	if err != nil {
		// As for undo's turn: a skill or file there is not is the
		// request's to change.
		field := "file"
		if _, ok := s.eng.Skills().Lookup(p.Name); !ok {
			field = "name"
		}
		switch wire.CodeOf(err) {
		case wire.CodeInvalidParams, wire.CodeNotFound:
			return jsonrpc.Fail(withSession(jsonrpc.InvalidParams(field, "%v", err), p.SessionID))
		}
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, ""))
	}
	return jsonrpc.Result(acp.SkillsGetResponse{Skill: skillInfo(res.Skill), File: res.File, Text: res.Text, Files: res.Files,
		Truncated: res.Truncated, Binary: res.Binary})
}

func skillInfo(sk wire.SkillInfo) acp.SkillInfo {
	out := acp.SkillInfo{Name: sk.Name, Description: sk.Description, Source: string(sk.Source), Path: sk.Path, Dir: sk.Dir}
	if sk.ShadowedBy != "" {
		by := sk.ShadowedBy
		out.ShadowedBy = &by
	}
	return out
}

// agentsList serves _zot/agents/list: the engine's Session.AgentList.
func (h *conn) agentsList(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.AgentsListRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	res := s.eng.AgentList()
	info := func(a wire.AgentInfo) acp.AgentInfo {
		return acp.AgentInfo{Name: a.Name, Description: a.Description, Tools: a.Tools, Model: a.Model, Source: a.Source, Path: a.Path, ShadowedBy: a.ShadowedBy}
	}
	out := acp.AgentsListResponse{Agents: make([]acp.AgentInfo, 0, len(res.Agents)), Shadowed: make([]acp.AgentInfo, 0, len(res.Shadowed)), Problems: res.Problems, Tool: res.Tool}
	for _, a := range res.Agents {
		out.Agents = append(out.Agents, info(a))
	}
	for _, a := range res.Shadowed {
		out.Shadowed = append(out.Shadowed, info(a))
	}
	return jsonrpc.Result(out)
}
