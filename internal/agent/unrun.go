package agent

import (
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// unrunText is the result of a complete call of an answer that the output
// limit cut: the call did not run either, since the answer it belongs to
// is incomplete.
const unrunText = "the call did not run: the answer reached the output limit before it ended, so none of its calls ran. Call the tool again if it is still needed."

// answerUnrun answers the calls of a step that the output limit ended
// without running any: a call the limit cut gets its own explanation (see
// llm.ToolCallBlock.MarkCut), the others unrunText. The results are
// emitted and added to the transcript, which so keeps a result for every
// call.
func (p *promptRun) answerUnrun(calls []*llm.ToolCallBlock) {
	results := make([]llm.Block, 0, len(calls))
	for _, c := range calls {
		text := unrunText
		if c.Cut {
			text = c.ArgsError
		}
		res := tools.Errorf(text)
		p.emit(&wire.ToolResultEvent{ID: c.ID, IsError: true, Content: resultBlocks(res.Content)})
		results = append(results, &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, IsError: true, Content: res.Content})
	}
	p.a.appendMessage(llm.Message{Role: llm.RoleTool, Content: results, Time: p.a.timeNow()})
}

// forget removes the prompt's messages from the transcript: its user
// message and every step kept since.
func (p *promptRun) forget() {
	p.a.truncate(p.userIndex)
	p.kept = false
}
