package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// abortedText is the result of a tool call skipped because the prompt was
// aborted.
const abortedText = "aborted: the prompt was aborted before this call ran"

// runTools runs the calls of one step in order, emits each result, and adds
// the results to the transcript as one tool message. Once ctx ends, the
// running tool is cancelled through its context and the calls after it
// are answered "aborted" without running.
func (p *promptRun) runTools(calls []*llm.ToolCallBlock, view *ToolView) {
	results := make([]llm.Block, 0, len(calls))
	for _, c := range calls {
		var res tools.Result
		if p.ctx.Err() != nil {
			res = tools.Errorf(abortedText)
		} else {
			res = p.runTool(c, view)
		}
		p.emit(&wire.ToolResultEvent{ID: c.ID, IsError: res.IsError, Content: resultBlocks(res.Content)})
		results = append(results, &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, IsError: res.IsError, Content: res.Content})
	}
	p.a.appendMessage(llm.Message{Role: llm.RoleTool, Content: results, Time: p.a.timeNow()})
}

// runTool runs one call, or answers it with an error the model can act on
// when its arguments are invalid, the tool is unknown, or an interceptor
// blocks it.
func (p *promptRun) runTool(c *llm.ToolCallBlock, view *ToolView) tools.Result {
	if c.ArgsError != "" {
		return tools.Errorf(fmt.Sprintf("the call did not run: %s. Call the tool again with a JSON object that matches its schema.", strings.TrimSuffix(c.ArgsError, ".")))
	}
	tool, ok := view.Lookup(c.Name)
	if !ok {
		return tools.Errorf(fmt.Sprintf("unknown tool %q; the tools are: %s", c.Name, view.Names()))
	}
	args := c.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if p.a.chain.Len() > 0 {
		v := p.a.chain.beforeTool(p.ctx, ToolCall{ID: c.ID, Name: c.Name, Args: args})
		if p.ctx.Err() != nil {
			return tools.Errorf(abortedText)
		}
		if v.Block {
			return tools.Errorf("the call was blocked and did not run: " + blockReason(v.Reason))
		}
		if v.Args != nil {
			args = v.Args
		}
	}
	return p.invoke(tool, c.ID, c.Name, args)
}

// invoke runs tool (through the tool middleware), forwarding its
// progress as tool_progress events until it returns. A Go error or a
// panic becomes an error result.
func (p *promptRun) invoke(tool tools.Tool, id, name string, args json.RawMessage) (res tools.Result) {
	var gate sync.Mutex
	open := true
	run := ToolRun{ID: id, Name: name, Args: args, tool: tool, Progress: func(text string) {
		gate.Lock()
		defer gate.Unlock()
		if open && text != "" {
			p.emit(&wire.ToolProgressEvent{ID: id, Text: text})
		}
	}}
	defer func() {
		gate.Lock()
		open = false
		gate.Unlock()
		if v := recover(); v != nil {
			res = tools.Errorf(fmt.Sprintf("the %s tool failed: panic: %s", tool.Name(), panicText(v)))
		}
	}()
	res, err := p.a.toolCall(p.ctx, run)
	if err != nil {
		if p.ctx.Err() != nil {
			return tools.Errorf("aborted: " + llm.ErrorText(err))
		}
		return tools.Errorf(fmt.Sprintf("the %s tool failed: %s", tool.Name(), llm.ErrorText(err)))
	}
	return res
}
