package responses

import (
	"encoding/json"
	"errors"
	"io"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// noIndex marks an event without an output_index.
const noIndex = -1

// maxItems bounds the output index a stream may use, so that a corrupt
// index cannot make the assembler allocate without limit.
const maxItems = 4096

// streamEvent is any Responses stream event; Type says which fields apply.
type streamEvent struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"` // noIndex when absent
	ItemID       string          `json:"item_id"`
	SummaryIndex int             `json:"summary_index"`
	ContentIndex int             `json:"content_index"`
	Delta        string          `json:"delta"`
	Arguments    *string         `json:"arguments"`
	Item         *outputItem     `json:"item"`
	Response     *wireResponse   `json:"response"`
	Code         json.RawMessage `json:"code"`    // error event
	Message      string          `json:"message"` // error event
	Error        *wireError      `json:"error"`   // error event, nested form
}

// outputItem is an item of the response's output.
type outputItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Phase            string `json:"phase"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// wireResponse is the response object of the lifecycle events.
type wireResponse struct {
	Status string `json:"status"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *wireError `json:"error"`
}

// assembler turns one call's stream events into sink events and a Response.
type assembler struct {
	provider   string
	sink       llm.Sink
	reported   bool    // an event beyond EventStart reached the sink
	items      []*item // by output index
	ncalls     int
	usage      llm.Usage
	incomplete string // incomplete_details.reason of response.incomplete
	done       bool
	ev         streamEvent // the event being handled, reused to spare allocations
}

func newAssembler(provider string, sink llm.Sink) *assembler {
	return &assembler{provider: provider, sink: sink}
}

// Reported says whether an event beyond EventStart reached the sink.
func (a *assembler) Reported() bool { return a.reported }

// emit reports an event to the sink.
func (a *assembler) emit(ev llm.Event) {
	a.reported = true
	a.sink(ev)
}

// Run reads s until the response's terminal event or an error.
func (a *assembler) Run(s *httpcall.Stream) error {
	for !a.done {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return &llm.Error{Provider: a.provider, Kind: "stream_cut", Message: "stream ended before response.completed", Retryable: true}
		}
		if err != nil {
			return err
		}
		if err := a.handle(ev); err != nil {
			return err
		}
	}
	return nil
}

// handle applies one SSE event.
func (a *assembler) handle(ev httpcall.Event) error {
	e := &a.ev
	*e = streamEvent{OutputIndex: noIndex}
	if err := json.Unmarshal(ev.Data, e); err != nil {
		return &llm.Error{Provider: a.provider, Kind: "invalid_event", Message: "decoding " + ev.Name + " event: " + err.Error(), Err: err}
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "response.output_item.added":
		return a.itemAdded(e)
	case "response.output_text.delta":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		a.text(it, llm.EventTextDelta, e.Delta)
	case "response.refusal.delta":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		a.refusalDelta(it, e.Delta)
	case "response.reasoning_summary_text.delta":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		a.summaryDelta(it, e.SummaryIndex, e.Delta)
	case "response.reasoning_text.delta":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		a.rawDelta(it, e.ContentIndex, e.Delta)
	case "response.function_call_arguments.delta":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		a.args(it, e.Delta)
	case "response.function_call_arguments.done":
		it, err := a.item(e)
		if err != nil {
			return err
		}
		if e.Arguments != nil {
			a.finalArgs(it, *e.Arguments)
		}
		a.endCall(it)
	case "response.output_item.done":
		return a.itemDone(e)
	case "response.completed":
		a.finish(e.Response)
		for _, it := range a.items {
			a.endCall(it)
		}
	case "response.incomplete":
		a.finish(e.Response)
		a.incomplete = "incomplete"
		if r := e.Response; r != nil && r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
			a.incomplete = r.IncompleteDetails.Reason
		}
	case "response.failed":
		var we *wireError
		if e.Response != nil {
			we = e.Response.Error
		}
		return a.streamError(we, "response failed without details")
	case "error":
		we := e.Error
		if we == nil {
			we = &wireError{Message: e.Message, Code: e.Code}
		}
		return a.streamError(we, "error event without details")
	}
	// response.created, response.in_progress, content and summary part
	// events and event types added later need nothing.
	return nil
}

// finish records the usage of a terminal event and ends the stream.
func (a *assembler) finish(r *wireResponse) {
	a.done = true
	if r == nil || r.Usage == nil {
		return
	}
	u := r.Usage
	cached, written := 0, 0
	if d := u.InputTokensDetails; d != nil {
		cached, written = d.CachedTokens, d.CacheWriteTokens
	}
	a.usage = llm.Usage{Input: max(u.InputTokens-cached-written, 0), Output: u.OutputTokens, CacheRead: cached, CacheWrite: written}
}

// streamError turns a response.failed or error event into an *llm.Error.
func (a *assembler) streamError(we *wireError, fallback string) error {
	le := &llm.Error{Provider: a.provider, Kind: "error", Message: fallback}
	if we == nil {
		return le
	}
	if k := we.kind(); k != "" {
		le.Kind = k
	}
	if we.Message != "" {
		le.Message = we.Message
	}
	le.Retryable = retryableKind(we.code()) || retryableKind(we.Type)
	return le
}

func (a *assembler) invalid(msg string) error {
	return &llm.Error{Provider: a.provider, Kind: "invalid_event", Message: msg}
}
