// Package compact shrinks a transcript that grows too long for the model's
// context window: the older messages are summarised by the model into one
// user message and a recent tail is kept as it is, but for its thinking
// (what came before that thinking is a summary now).
//
// The tail never starts between a tool call and its results, so the new
// transcript is as valid for every provider as the old one. An older part
// too large for one model call is summarised in chunks, and the chunk
// summaries are merged (in as many rounds as it takes) into one.
package compact

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
)

// DefaultKeepTail is how many recent messages are kept when Options.KeepTail
// is zero.
const DefaultKeepTail = 4

// Meta keys set on the summary message.
const (
	// MetaCompaction marks a summary message (value "true"); providers and
	// the scripted provider's prompt count ignore it as a user prompt.
	MetaCompaction = "compaction"
	// MetaSummarised holds how many messages the summary replaced.
	MetaSummarised = "summarised_messages"
)

// ErrNothingToCompact is returned when the kept tail covers the whole
// transcript.
var ErrNothingToCompact = errors.New("nothing to compact")

// ErrEmptySummary is returned when the model answered a summarising call
// without text.
var ErrEmptySummary = errors.New("summarising: the model returned an empty summary")

// Options configures a compaction.
type Options struct {
	// Provider makes the summarising calls. No tools are offered to it.
	Provider llm.Provider
	// Model is the model that summarises; its context window sizes the
	// chunks and its output limit caps each summary.
	Model models.Model
	// Instructions are the user's extra instructions for the summary
	// (what to focus on); blank means none.
	Instructions string
	// KeepTail is how many recent messages stay as they are: 0 means
	// DefaultKeepTail, a negative value keeps none. The tail grows by as
	// many messages as needed to keep tool calls with their results.
	KeepTail int
	// Now gives the time of the summary message; nil means time.Now.
	Now func() time.Time
	// OnCall, when non-nil, is told the usage of every summarising call
	// that reached the provider, including one that failed partway, as
	// soon as it ends, so its cost is counted even if a later call fails.
	OnCall func(llm.Usage)
}

// Result is a finished compaction.
type Result struct {
	// Messages is the new transcript: the summary message, then the kept
	// tail.
	Messages []llm.Message
	// Summary is the model's summary of the older messages.
	Summary string
	// Summarised is how many messages the summary replaced.
	Summarised int
	// Usage is the total usage of the summarising calls.
	Usage llm.Usage
	// Calls is how many summarising calls were made (more than one when
	// the older part was summarised in chunks).
	Calls int
}

// Compact summarises all but the tail of msgs and returns the new
// transcript. msgs is not modified. On error (including cancellation of
// ctx) no new transcript is returned; the usage of calls made so far has
// been reported to Options.OnCall.
func Compact(ctx context.Context, msgs []llm.Message, o Options) (*Result, error) {
	if o.Provider == nil {
		return nil, errors.New("compacting: no provider")
	}
	keep := o.KeepTail
	switch {
	case keep == 0:
		keep = DefaultKeepTail
	case keep < 0:
		keep = 0
	}
	cut := Split(msgs, keep)
	if cut == 0 {
		return nil, fmt.Errorf("%w: the transcript has %d messages and the last %d are kept", ErrNothingToCompact, len(msgs), keep)
	}
	s := newSummariser(o)
	summary, err := s.summarise(ctx, msgs[:cut])
	if err != nil {
		return nil, err
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	out := make([]llm.Message, 0, 1+len(msgs)-cut)
	out = append(out, llm.Message{
		Role:    llm.RoleUser,
		Content: []llm.Block{&llm.TextBlock{Text: summaryPreamble + summary}},
		Time:    now().UTC(),
		Meta:    map[string]string{MetaCompaction: "true", MetaSummarised: strconv.Itoa(cut)},
	})
	for _, m := range msgs[cut:] {
		out = append(out, withoutThinking(m))
	}
	return &Result{Messages: out, Summary: summary, Summarised: cut, Usage: s.usage, Calls: s.calls}, nil
}

// withoutThinking returns m without its thinking blocks. The kept tail
// keeps no thinking: what came before it changed (it is a summary now),
// and a model that binds its thinking to what came before refuses such
// blocks back. An assistant message holds text or tool calls besides its
// thinking (the agent keeps no other), so none is left empty.
func withoutThinking(m llm.Message) llm.Message {
	for i, b := range m.Content {
		if _, ok := b.(*llm.ThinkingBlock); ok {
			kept := append([]llm.Block(nil), m.Content[:i]...)
			for _, b := range m.Content[i+1:] {
				if _, ok := b.(*llm.ThinkingBlock); !ok {
					kept = append(kept, b)
				}
			}
			m.Content = kept
			return m
		}
	}
	return m
}

// Split returns the index where the kept tail of msgs begins when about
// keepTail messages are kept: len(msgs)-keepTail, moved earlier while the
// tail would start with tool results (whose calls are in the message before
// them). 0 means everything is kept.
func Split(msgs []llm.Message, keepTail int) int {
	cut := max(len(msgs)-max(keepTail, 0), 0)
	for cut > 0 && cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut--
	}
	return cut
}

// IsSummary reports whether m is a summary message made by Compact.
func IsSummary(m *llm.Message) bool { return m.Meta[MetaCompaction] == "true" }
