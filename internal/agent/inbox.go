package agent

import (
	"fmt"
	"sync"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// Bounds of an Inbox: the size of one text and how many of each kind wait.
const (
	MaxInboxText    = 64 << 10
	MaxInboxPending = 16
)

// Meta keys of the user messages an Inbox adds: MetaKind holds the
// wire.UserMessageKind, MetaSource where a context came from.
const (
	MetaKind   = "zot_kind"
	MetaSource = "zot_source"
)

// ErrNotRunning is returned by Inbox.Steer when no prompt runs that would
// take the steer at a step boundary; the caller runs it as a prompt.
var ErrNotRunning = wire.Sentinel(wire.CodeInvalidParams, "no prompt runs to steer")

// Inbox holds what reaches a running prompt from outside: steers (user
// messages added at the next step boundary) and contexts (system context
// added to the next model call, in this prompt or the next). Its methods
// are safe for concurrent use.
type Inbox struct {
	mu       sync.Mutex
	open     bool // a prompt runs and will still look for steers
	steers   []string
	contexts []inboxContext
}

type inboxContext struct{ text, source string }

func checkInboxText(what, text string, n int) error {
	switch {
	case text == "":
		return wire.Sentinel(wire.CodeInvalidParams, what+": the text is empty")
	case len(text) > MaxInboxText:
		return wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("%s: %d bytes is more than the %d a session takes", what, len(text), MaxInboxText))
	case n >= MaxInboxPending:
		return wire.Sentinel(wire.CodeLimitExceeded, fmt.Sprintf("%s: %d already wait, the most a session holds", what, MaxInboxPending))
	}
	return nil
}

// Steer hands text to the running prompt for its next step boundary. It
// returns ErrNotRunning when no prompt runs or the running one has already
// ended its last step. accepted, when not nil, is called before the steer
// can be delivered (so an answer written there precedes its user_message);
// it must not block.
func (b *Inbox) Steer(text string, accepted func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := checkInboxText("steer", text, len(b.steers)); err != nil {
		return err
	}
	if !b.open {
		return ErrNotRunning
	}
	if accepted != nil {
		accepted()
	}
	b.steers = append(b.steers, text)
	return nil
}

// Inject adds context for the next model call and returns how many
// contexts wait, this one included.
func (b *Inbox) Inject(text, source string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := checkInboxText("inject_context", text, len(b.contexts)); err != nil {
		return 0, err
	}
	b.contexts = append(b.contexts, inboxContext{text, source})
	return len(b.contexts), nil
}

// Open opens the inbox for steers: a prompt begins (or is about to: the
// engine opens it as the prompt's work starts, Prompt again).
func (b *Inbox) Open() {
	b.mu.Lock()
	b.open = true
	b.mu.Unlock()
}

// stop closes the inbox for steers; those waiting stay for the next prompt.
func (b *Inbox) stop() {
	b.mu.Lock()
	b.open = false
	b.mu.Unlock()
}

// stopIfNoSteer closes the inbox when no steer waits, and reports whether
// it did: the prompt may end. Otherwise the prompt runs one more step.
func (b *Inbox) stopIfNoSteer() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.steers) > 0 {
		return false
	}
	b.open = false
	return true
}

// take returns and forgets what waits: contexts first, then steers.
func (b *Inbox) take() (contexts []inboxContext, steers []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	contexts, steers = b.contexts, b.steers
	b.contexts, b.steers = nil, nil
	return contexts, steers
}

// contextText is how a context reads to the model.
func contextText(c inboxContext) string {
	return fmt.Sprintf("<system-context source=%q>\n%s\n</system-context>", c.source, c.text)
}

// deliver adds what waits in the agent's inbox to the transcript, each
// message reported as a user_message where it lands. It reports whether
// anything was added.
func (p *promptRun) deliver() bool {
	if p.a.inbox == nil {
		return false
	}
	contexts, steers := p.a.inbox.take()
	for _, c := range contexts {
		p.addUser(contextText(c), map[string]string{MetaKind: string(wire.UserMessageKindContext), MetaSource: c.source}, wire.UserMessageKindContext, c.source)
	}
	for _, s := range steers {
		p.addUser(s, map[string]string{MetaKind: string(wire.UserMessageKindSteer)}, wire.UserMessageKindSteer, "")
	}
	return len(contexts)+len(steers) > 0
}

func (p *promptRun) addUser(text string, meta map[string]string, kind wire.UserMessageKind, source string) {
	msg := llm.Message{Role: llm.RoleUser, Time: p.a.timeNow(), Content: []llm.Block{&llm.TextBlock{Text: text}}, Meta: meta}
	p.a.appendMessage(msg)
	p.emit(&wire.UserMessageEvent{Content: wireBlocks(&msg), Time: wireTime(msg.Time), Kind: kind, Source: source})
}
