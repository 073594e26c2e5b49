package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// syntheticIDPrefix starts the ids zot gives function calls that came
// without one. Such ids are not sent back to Gemini.
const syntheticIDPrefix = "gemini-call-"

// wireID is id as sent to Gemini: empty for an id zot made up.
func wireID(id string) string {
	if strings.HasPrefix(id, syntheticIDPrefix) {
		return ""
	}
	return id
}

// chunk is one streamed GenerateContentResponse, or an error object.
type chunk struct {
	Candidates []struct {
		Index   int `json:"index"`
		Content *struct {
			Parts []partIn `json:"parts"`
		} `json:"content"`
		FinishReason  string `json:"finishReason"`
		FinishMessage string `json:"finishMessage"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
		ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	} `json:"usageMetadata"`
	ResponseID string     `json:"responseId"`
	Error      *wireError `json:"error"`
}

// partIn is a part of a streamed candidate.
type partIn struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// block is one block of the message being assembled.
type block struct {
	kind string // "text", "thought" or "call"
	text strings.Builder
	sig  string // the part's thoughtSignature; a text block ends with it
	call *llm.ToolCallBlock
}

// assembler turns one call's chunks into sink events and a Response.
type assembler struct {
	sink       llm.Sink
	reported   bool // an event beyond EventStart reached the sink
	blocks     []*block
	ncalls     int
	responseID string
	finish     string
	reason     string // a refusal's reason: the finish or block reason and its message
	usage      llm.Usage
}

func newAssembler(sink llm.Sink) *assembler { return &assembler{sink: sink} }

// Reported says whether an event beyond EventStart reached the sink.
func (a *assembler) Reported() bool { return a.reported }

// emit reports an event to the sink.
func (a *assembler) emit(ev llm.Event) {
	a.reported = true
	a.sink(ev)
}

// Run reads s to its end. Gemini has no end marker: a stream that ends
// before a chunk gave a finish reason was cut.
func (a *assembler) Run(s *httpcall.Stream) error {
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			if a.finish == "" {
				return &llm.Error{Provider: providerName, Kind: "stream_cut", Message: "stream ended before a finish reason", Retryable: true}
			}
			return nil
		}
		if err != nil {
			return err
		}
		if err := a.handle(ev.Data); err != nil {
			return err
		}
	}
}

// handle applies one chunk.
func (a *assembler) handle(data []byte) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &llm.Error{Provider: providerName, Kind: "invalid_event", Message: "decoding chunk: " + err.Error(), Err: err}
	}
	if c.Error != nil {
		return chunkError(c.Error)
	}
	if c.ResponseID != "" {
		a.responseID = c.ResponseID
	}
	if u := c.UsageMetadata; u != nil {
		input := u.PromptTokenCount + u.ToolUsePromptTokenCount
		a.usage = llm.Usage{
			Input:     max(input-u.CachedContentTokenCount, 0),
			Output:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheRead: u.CachedContentTokenCount,
		}
	}
	if f := c.PromptFeedback; f != nil && f.BlockReason != "" && len(c.Candidates) == 0 {
		reason := withMessage(f.BlockReason, f.BlockReasonMessage)
		if !refusalBlock(f.BlockReason) {
			return &llm.Error{Provider: providerName, Kind: "prompt_blocked", Message: "prompt blocked: " + reason}
		}
		a.finish, a.reason = f.BlockReason, "prompt blocked: "+reason
		return nil
	}
	for i := range c.Candidates {
		cand := &c.Candidates[i]
		if cand.Index != 0 {
			continue // zot asks for one candidate
		}
		if cand.Content != nil {
			for j := range cand.Content.Parts {
				a.part(&cand.Content.Parts[j])
			}
		}
		switch f := cand.FinishReason; {
		case f == "":
		case refusalFinish(f):
			a.finish, a.reason = f, withMessage(f, cand.FinishMessage)
		case failureFinish(f):
			// A failed function call, too many of them, OTHER and the
			// like are failures that say the vendor's reason. A failed
			// call usually succeeds on another try.
			msg := cand.FinishMessage
			if msg == "" {
				msg = finishMessage(f)
			}
			if msg == "" {
				msg = "the model stopped with finish reason " + f
			}
			return &llm.Error{Provider: providerName, Kind: f, Message: msg, Retryable: f == "MALFORMED_FUNCTION_CALL" || f == "UNEXPECTED_TOOL_CALL"}
		case f != "STOP" && f != "MAX_TOKENS" && len(a.blocks) == 0:
			// A reason the SDK's enum does not have, with nothing
			// answered: a failure that says so, never an empty success.
			msg := cand.FinishMessage
			if msg == "" {
				msg = "the model ended without an answer, with finish reason " + f
			}
			return &llm.Error{Provider: providerName, Kind: f, Message: msg}
		default:
			// STOP, MAX_TOKENS, and a reason the SDK's enum does not
			// have after an answer, which ends it like STOP.
			a.finish = f
		}
	}
	return nil
}

// part applies one streamed part. Text arrives in pieces that continue
// the current block of their kind until a piece carries a signature,
// which ends the block; a signature on an empty part belongs to the block
// before it.
func (a *assembler) part(p *partIn) {
	if p.FunctionCall != nil {
		a.call(p)
		return
	}
	if p.Text == nil {
		return // inline data, code execution and parts added later
	}
	kind, ev := "text", llm.EventTextDelta
	if p.Thought {
		kind, ev = "thought", llm.EventThinkingDelta
	}
	text := *p.Text
	var b *block
	if n := len(a.blocks); n > 0 && a.blocks[n-1].kind == kind && a.blocks[n-1].sig == "" {
		b = a.blocks[n-1]
	}
	if b == nil {
		if text == "" && p.ThoughtSignature == "" {
			return
		}
		b = &block{kind: kind}
		a.blocks = append(a.blocks, b)
	}
	if text != "" {
		b.text.WriteString(text)
		a.emit(llm.Event{Kind: ev, Text: text})
	}
	if p.ThoughtSignature != "" {
		b.sig = p.ThoughtSignature
	}
}

// call applies a function call part. Gemini sends a call whole, so its
// start, arguments and end are reported at once.
func (a *assembler) call(p *partIn) {
	fc := p.FunctionCall
	id := fc.ID
	if id == "" {
		id = syntheticIDPrefix
		if a.responseID != "" {
			id += a.responseID + "-"
		}
		id += strconv.Itoa(a.ncalls)
	}
	a.ncalls++
	raw := fc.Args
	if string(raw) == "null" {
		raw = nil
	}
	args, argsErr := llm.ParseToolArgs(raw)
	b := &block{kind: "call", call: &llm.ToolCallBlock{ID: id, Name: fc.Name, Args: args, ArgsError: argsErr, Signature: p.ThoughtSignature}}
	a.blocks = append(a.blocks, b)
	a.emit(llm.Event{Kind: llm.EventToolStart, ToolID: id, ToolName: fc.Name})
	if len(raw) > 0 {
		a.emit(llm.Event{Kind: llm.EventToolArgsDelta, ToolID: id, Text: string(raw)})
	}
	a.emit(llm.Event{Kind: llm.EventToolEnd, ToolID: id})
}

// Response assembles what has arrived. A text block's signature follows
// it as a ThinkingBlock with only the signature.
func (a *assembler) Response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	hasTools := false
	for _, b := range a.blocks {
		switch b.kind {
		case "thought":
			msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: providerName, Text: b.text.String(), Signature: b.sig})
		case "text":
			if b.text.Len() > 0 {
				msg.Content = append(msg.Content, &llm.TextBlock{Text: b.text.String()})
			}
			if b.sig != "" {
				msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: providerName, Signature: b.sig})
			}
		case "call":
			call := *b.call
			msg.Content = append(msg.Content, &call)
			hasTools = true
		}
	}
	resp := &llm.Response{Message: msg, Stop: stopReason(a.finish, hasTools), Usage: a.usage, Finish: a.finish}
	if resp.Stop == llm.StopRefusal {
		resp.Reason = a.reason
	}
	return resp
}

// refusalFinish reports whether s is one of the finish reasons (FinishReason of @google/genai
// 3.3.0, dist/genai.d.ts) by which Gemini's safety and policy systems end
// an answer: zot reports them as refusals, with the reason. ESCALATION
// (an escalation rule filtered the request) and PUP_LIMITED_DISABLED (the
// account is limited for Prohibited Use Policy violations) are policy
// stops, as is MODEL_ARMOR on Vertex AI.
func refusalFinish(s string) bool {
	switch s {
	case "SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "ESCALATION",
		"PUP_LIMITED_DISABLED", "MODEL_ARMOR":
		return true
	}
	return false
}

// failureFinish reports whether s is one of the other finish reasons of that enum: the model
// failed to answer, and zot reports the call as failed with the reason.
func failureFinish(s string) bool {
	switch s {
	case "MALFORMED_FUNCTION_CALL", "TOO_MANY_TOOL_CALLS", "OTHER", "UNEXPECTED_TOOL_CALL",
		"FINISH_REASON_UNSPECIFIED", "NO_IMAGE", "IMAGE_OTHER", "CONTINUATION", "MALFORMED_RESPONSE",
		"MISSING_THOUGHT_SIGNATURE":
		return true
	}
	return false
}

// finishMessage says what a failure reason means when Gemini gave no
// finishMessage of its own.
func finishMessage(reason string) string {
	if reason == "MISSING_THOUGHT_SIGNATURE" {
		return "the request sent back a function call without its thought signature, which this model requires; zot sends the signature it received, or the documented skip value for a call that had none, so this is a zot error: report it"
	}
	return ""
}

// refusalBlock reports whether s is one of the promptFeedback.blockReason values (BlockedReason
// of @google/genai 3.1.0) that refuse the prompt on safety grounds; OTHER
// and reasons added later stay failures.
func refusalBlock(s string) bool {
	switch s {
	case "SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "MODEL_ARMOR", "JAILBREAK":
		return true
	}
	return false
}

// withMessage is reason, followed by the vendor's message when it gave one.
func withMessage(reason, message string) string {
	if message == "" {
		return reason
	}
	return reason + ": " + message
}

// stopReason maps finishReason: a safety stop is a refusal and MAX_TOKENS
// the output limit whatever came before (the calls of such an answer never
// run); any other function call means tool_use. Failure reasons never get
// here: they end the call with an error.
func stopReason(finish string, hasTools bool) llm.StopReason {
	switch {
	case refusalFinish(finish) || refusalBlock(finish):
		return llm.StopRefusal
	case finish == "MAX_TOKENS":
		return llm.StopLength
	case hasTools:
		return llm.StopToolUse
	}
	// STOP and nothing at all.
	return llm.StopEndTurn
}

// chunkError turns an error chunk into an *llm.Error.
func chunkError(e *wireError) error {
	le := &llm.Error{Provider: providerName, Kind: e.Status, Message: e.Message, Retryable: e.retryable()}
	if le.Kind == "" {
		le.Kind = "error"
	}
	if le.Message == "" {
		le.Message = "error chunk without details"
	}
	return le
}
