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

// runTools runs the calls of one step, emits each result, and adds the
// results to the transcript as one tool message, in the calls' order.
// Calls run one after another, in order, except consecutive calls of
// tools that say they may run side by side (tools.IsConcurrent): those
// pass the interceptors in order, then run together, each result emitted
// as it comes. Once ctx ends, the running tools are cancelled through
// their context and the calls not started are answered "aborted" without
// running.
func (p *promptRun) runTools(calls []*llm.ToolCallBlock, view *ToolView) {
	results := make([]llm.Block, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if p.concurrent(calls[i], view) {
			for j < len(calls) && p.concurrent(calls[j], view) {
				j++
			}
		}
		if j-i > 1 {
			p.runTogether(calls[i:j], view, results[i:j])
			i = j
			continue
		}
		c := calls[i]
		var res tools.Result
		if p.ctx.Err() != nil {
			res = tools.Errorf(abortedText)
		} else {
			res = p.runTool(c, view)
		}
		results[i] = p.result(c, res)
		i = j
	}
	p.a.appendMessage(llm.Message{Role: llm.RoleTool, Content: results, Time: p.a.timeNow()})
}

// result emits the tool_result of call c and returns its block for the
// transcript.
func (p *promptRun) result(c *llm.ToolCallBlock, res tools.Result) llm.Block {
	p.emit(&wire.ToolResultEvent{ID: c.ID, IsError: res.IsError, Content: resultBlocks(res.Content)})
	return &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, IsError: res.IsError, Content: res.Content}
}

// concurrent reports whether call c may run beside its neighbours.
func (p *promptRun) concurrent(c *llm.ToolCallBlock, view *ToolView) bool {
	if c.ArgsError != "" {
		return false
	}
	t, ok := view.Lookup(c.Name)
	return ok && tools.IsConcurrent(t)
}

// runTogether runs calls side by side: each passes the interceptors in
// order first (a call they block is answered at once), then the calls
// let through start together, each result emitted as it comes, into
// results at the call's place.
func (p *promptRun) runTogether(calls []*llm.ToolCallBlock, view *ToolView, results []llm.Block) {
	type ready struct {
		i    int
		tool tools.Tool
		args json.RawMessage
	}
	var start []ready
	for i, c := range calls {
		if p.ctx.Err() != nil {
			results[i] = p.result(c, tools.Errorf(abortedText))
			continue
		}
		tool, args, res, ok := p.prepare(c, view)
		if !ok {
			results[i] = p.result(c, res)
			continue
		}
		start = append(start, ready{i: i, tool: tool, args: args})
	}
	var wg sync.WaitGroup
	for _, r := range start {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := calls[r.i]
			results[r.i] = p.result(c, p.invoke(r.tool, c.ID, c.Name, r.args))
		}()
	}
	wg.Wait()
}

// runTool runs one call, or answers it with an error the model can act on
// when its arguments are invalid, the tool is unknown, or an interceptor
// blocks it.
func (p *promptRun) runTool(c *llm.ToolCallBlock, view *ToolView) tools.Result {
	tool, args, res, ok := p.prepare(c, view)
	if !ok {
		return res
	}
	return p.invoke(tool, c.ID, c.Name, args)
}

// prepare finds the tool of call c and runs the interceptors on it: ok
// with the tool and the arguments it is to run with, or the result that
// answers the call in its place (invalid arguments, an unknown tool, a
// block, an abort).
func (p *promptRun) prepare(c *llm.ToolCallBlock, view *ToolView) (tools.Tool, json.RawMessage, tools.Result, bool) {
	if c.ArgsError != "" {
		return nil, nil, tools.Errorf(fmt.Sprintf("the call did not run: %s. Call the tool again with a JSON object that matches its schema.", strings.TrimSuffix(c.ArgsError, "."))), false
	}
	tool, ok := view.Lookup(c.Name)
	if !ok {
		return nil, nil, tools.Errorf(fmt.Sprintf("unknown tool %q; the tools are: %s", c.Name, view.Names())), false
	}
	args := c.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if p.a.chain.Len() > 0 {
		v := p.a.chain.beforeTool(p.ctx, ToolCall{ID: c.ID, Name: c.Name, Args: args})
		if p.ctx.Err() != nil {
			return nil, nil, tools.Errorf(abortedText), false
		}
		if v.Block {
			return nil, nil, tools.Errorf("the call was blocked and did not run: " + blockReason(v.Reason)), false
		}
		if v.Args != nil {
			args = v.Args
		}
	}
	return tool, args, tools.Result{}, true
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
