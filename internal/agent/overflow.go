package agent

import (
	"errors"
	"net/http"
	"strings"

	"zot.dev/zot/internal/llm"
)

// overflowPhrases are how providers say a request is larger than the
// model's context window.
var overflowPhrases = []string{
	"context_length_exceeded",
	"context length",
	"context window",
	"prompt is too long",
	"input is too long",
	"too many tokens",
	"maximum number of tokens",
	"input token count",
}

// contextOverflow reports whether err is a provider refusing a request
// because it does not fit the model's context window.
func contextOverflow(err error) bool {
	var le *llm.Error
	if !errors.As(err, &le) {
		return false
	}
	if le.Status == http.StatusRequestEntityTooLarge {
		return true
	}
	text := strings.ToLower(le.Kind + " " + le.Message)
	for _, p := range overflowPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// compactForOverflow compacts the transcript after the provider refused
// the request as too long, so the call can be tried once more. The
// prompt's user message moves in the compacted transcript; its index is
// found again so a later rollback still removes the right message.
func (p *promptRun) compactForOverflow() error {
	a := p.a
	a.mu.Lock()
	var first llm.Block
	if p.userIndex < len(a.msgs) && len(a.msgs[p.userIndex].Content) > 0 {
		first = a.msgs[p.userIndex].Content[0]
	}
	a.mu.Unlock()
	if err := p.compact(""); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, m := range a.msgs {
		if len(m.Content) > 0 && m.Content[0] == first {
			p.userIndex = i
			return nil
		}
	}
	// The prompt itself was summarised: keep it whatever happens next.
	p.kept = true
	return nil
}
