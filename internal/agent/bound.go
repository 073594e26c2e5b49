package agent

import (
	"errors"
	"net/http"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sysprompt"
)

// A model whose thinking is bound to the conversation (models.Model
// BoundThinking: Anthropic's preserved thinking) refuses, with a 400 that
// no retry fixes, a request in which the system prompt, the tools or an
// earlier message changed after it produced a thinking block that comes
// back. So for such a model the agent keeps the prefix still:
//   - the system prompt is the one of the conversation's first call; when
//     it would read otherwise later (the date moved on, the tool list
//     changed), the next prompt's user message starts with a note saying
//     what changed, as the vendor recommends (the note stays in the
//     transcript, so later requests keep the same prefix);
//   - the tools offered stay those of the prompt's first step until the
//     prompt ends; a tool set that changed reaches the model with the next
//     prompt (the provider then leaves out the thinking the new tools
//     invalidate);
//   - compaction keeps no thinking, and the provider leaves out thinking of
//     another model than the one called;
//   - the 400 itself is recognised and answered once per prompt by dropping
//     the provider's thinking from the transcript and sending again (so are
//     OpenAI Responses' refusal of encrypted reasoning it cannot verify and
//     Gemini's of thought signatures, see boundRejected).

// MetaNote marks a user message whose first block is a note from zot
// (what changed in the system prompt since the conversation began) rather
// than the user's text; the wire leaves the note out.
const MetaNote = "zot_note"

// boundState is the fixed system prompt of a conversation with a model of
// bound thinking. Guarded by Agent.mu.
type boundState struct {
	// system is the system prompt sent since the conversation's first call
	// to such a model; "" until then, and again after the transcript was
	// rewritten (clear, compaction, a transcript set from outside), when
	// the prefix may change anyway.
	system string
	// noted is the system prompt the conversation has been told of: the
	// fixed one, or the one the last note described.
	noted string
}

// resetBound lets the next call fix the system prompt anew. Called with
// a.mu held.
func (a *Agent) resetBound() { a.bound = boundState{} }

// systemFor returns the system prompt of a call to model: the current one,
// or for a model with bound thinking the conversation's fixed one.
func (a *Agent) systemFor(bound bool) string {
	cur := a.system()
	if !bound {
		return cur
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bound.system == "" {
		a.bound.system, a.bound.noted = cur, cur
	}
	return a.bound.system
}

// note returns the note that the prompt about to start must carry, and
// records it as told: what changed in the system prompt since the
// conversation was last told of it; "" when nothing did or the model's
// thinking is not bound. It also returns what the conversation had been
// told before, for untold.
func (a *Agent) note(bound bool) (note, before string) {
	if !bound {
		return "", ""
	}
	a.mu.Lock()
	fixed, noted := a.bound.system != "", a.bound.noted
	a.mu.Unlock()
	if !fixed {
		return "", ""
	}
	cur := a.system()
	if cur == noted {
		return "", ""
	}
	a.mu.Lock()
	a.bound.noted = cur
	a.mu.Unlock()
	return "Note from zot: the system prompt above is as of the start of this conversation. Since then: " + sysprompt.Changes(noted, cur), noted
}

// untold takes back a note whose message left the transcript (its prompt
// failed): the conversation was told only before, so the next prompt
// carries the note again.
func (a *Agent) untold(before string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bound.system != "" {
		a.bound.noted = before
	}
}

// boundRejected reports whether err is the provider refusing thinking
// it produced earlier and got back, with a 400 that no retry of the same
// request fixes: Anthropic's prefix check for a model that binds its
// thinking to the conversation ("Invalid `signature` in `thinking`
// block", "bound to a different conversation"), and OpenAI Responses'
// invalid_encrypted_content ("The encrypted content … could not be
// verified", as after a change of key or organization, or for reasons of
// its own: every later request of the session fails the same way), and
// Gemini's refusals of the thought signatures sent back ("Corrupted
// thought signature.", "Thought signature is not valid").
func boundRejected(err error) bool {
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != http.StatusBadRequest {
		return false
	}
	text := strings.ToLower(le.Message)
	return strings.Contains(text, "bound to a different conversation") ||
		strings.Contains(text, "thinking") && strings.Contains(text, "signature") ||
		strings.Contains(text, "thought signature") || strings.Contains(text, "thought_signature") ||
		le.Kind == "invalid_encrypted_content" ||
		strings.Contains(text, "encrypted content") && strings.Contains(text, "could not be verified")
}

// dropThinking removes the thinking blocks of provider from every message
// of the transcript (a message left with nothing else keeps an empty text,
// which providers skip, so the transcript stays valid), and the thought
// signatures of tool calls (only Gemini signs them; a call without one is
// sent with the value Gemini documents for calls it did not sign).
func (a *Agent) dropThinking(provider string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	msgs := make([]llm.Message, len(a.msgs))
	copy(msgs, a.msgs)
	changed := false
	for i := range msgs {
		var kept []llm.Block
		dropped := false
		for _, b := range msgs[i].Content {
			switch t := b.(type) {
			case *llm.ThinkingBlock:
				if t.Provider == provider {
					dropped = true
					continue
				}
			case *llm.ToolCallBlock:
				if t.Signature != "" {
					unsigned := *t
					unsigned.Signature = ""
					b, dropped = &unsigned, true
				}
			}
			kept = append(kept, b)
		}
		if dropped {
			if len(kept) == 0 {
				kept = []llm.Block{&llm.TextBlock{}}
			}
			msgs[i].Content = kept
			changed = true
		}
	}
	if changed {
		a.msgs = msgs
		a.gen++
	}
}

// sendsThinking reports whether msgs hold what a provider may refuse back
// as bound or unverifiable: thinking blocks, or signed tool calls.
func sendsThinking(msgs []llm.Message) bool {
	for i := range msgs {
		for _, b := range msgs[i].Content {
			switch t := b.(type) {
			case *llm.ThinkingBlock:
				return true
			case *llm.ToolCallBlock:
				if t.Signature != "" {
					return true
				}
			}
		}
	}
	return false
}

// stampModel records model on the thinking blocks of msg that do not say
// which model produced them.
func stampModel(msg *llm.Message, model string) {
	for _, b := range msg.Content {
		if t, ok := b.(*llm.ThinkingBlock); ok && t.Model == "" {
			t.Model = model
		}
	}
}
