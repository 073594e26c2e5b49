package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// ErrNoForkPoint is matched (errors.Is) by the error of Fork and Cut when
// the message asked for is not a user's prompt of the transcript (or the
// transcript has none).
var ErrNoForkPoint = errors.New("no such user message to fork at")

// ForkPoint names the user message a fork starts at. Its zero value is
// the last user message of the transcript; AtIndex and AtMessage name
// another.
type ForkPoint struct {
	index   int // used when byIndex
	byIndex bool
	id      string // a MessageID, when not empty
}

// AtIndex is the user message at position i (from 0) of the transcript.
func AtIndex(i int) ForkPoint { return ForkPoint{index: i, byIndex: true} }

// AtMessage is the user message whose MessageID is id.
func AtMessage(id string) ForkPoint { return ForkPoint{id: id} }

// ParseForkPoint reads a fork point as a person or a client writes it:
// "" for the last user message, a decimal position (from 0), or a
// message id.
func ParseForkPoint(s string) ForkPoint {
	if s == "" {
		return ForkPoint{}
	}
	if i, err := strconv.Atoi(s); err == nil {
		return AtIndex(i)
	}
	return AtMessage(s)
}

// String is p as ParseForkPoint reads it.
func (p ForkPoint) String() string {
	switch {
	case p.byIndex:
		return strconv.Itoa(p.index)
	case p.id != "":
		return p.id
	}
	return "the last user message"
}

// MessageID is the id of message m (see sessionfile.MessageID): stable
// across loads, forks, exports and compaction.
func MessageID(m llm.Message) string { return sessionfile.MessageID(m) }

// IsPrompt reports whether m is a user's prompt, a message a fork may
// start at: a user message that is not a compaction's summary.
func IsPrompt(m llm.Message) bool {
	return m.Role == llm.RoleUser && m.Meta["compaction"] != "true"
}

// Cut returns the position in msgs of the user message p names: a fork
// at it keeps msgs[:i], everything before that prompt, whose turns are
// whole (each tool call answered), and leaves the prompt itself out, for
// the user to send again or edit. It fails with an error matching
// ErrNoForkPoint when p names no user prompt of msgs.
func Cut(msgs []llm.Message, p ForkPoint) (int, error) {
	switch {
	case p.byIndex:
		if p.index < 0 || p.index >= len(msgs) {
			return 0, fmt.Errorf("message %d: the transcript has %d messages: %w", p.index, len(msgs), ErrNoForkPoint)
		}
		if !IsPrompt(msgs[p.index]) {
			return 0, fmt.Errorf("message %d is not a user's prompt (it is %s): %w", p.index, describeMessage(msgs[p.index]), ErrNoForkPoint)
		}
		return p.index, nil
	case p.id != "":
		for i, m := range msgs {
			if m.Role == llm.RoleUser && MessageID(m) == p.id {
				if !IsPrompt(m) {
					return 0, fmt.Errorf("message %s is a compaction's summary, not a user's prompt: %w", p.id, ErrNoForkPoint)
				}
				return i, nil
			}
		}
		return 0, fmt.Errorf("message %s: %w", p.id, ErrNoForkPoint)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if IsPrompt(msgs[i]) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("the transcript has no user prompt: %w", ErrNoForkPoint)
}

// describeMessage says what kind of message m is, for an error.
func describeMessage(m llm.Message) string {
	switch {
	case m.Role == llm.RoleUser:
		return "a compaction's summary"
	case m.Role == llm.RoleTool:
		return "a round of tool results"
	}
	return "the " + string(m.Role) + "'s"
}

// Forked is what Fork made.
type Forked struct {
	// Entry is the new session's.
	Entry
	// At is the position in the parent's transcript of the prompt the
	// fork was made at: the new session holds the parent's messages
	// before it.
	At int
	// Message is that prompt, which the new session does not hold (a
	// client offers it to be edited and sent again); MessageID is its id.
	Message   llm.Message
	MessageID string
}

// Fork makes a new session (with a fresh id, in the parent's working
// directory) from stored session id: it holds the messages of id's
// transcript before the user prompt at names, and its file and entry
// record the link to its parent (Entry.Parent, Entry.ForkIndex,
// Entry.ForkMessage), so that the index shows the sessions as a tree.
// The parent is read, never written: it may be open in another process
// meanwhile (what that process has written by then is forked; a torn last
// line is left out). The new file appears whole or not at all. Fork
// fails with an error matching ErrNotFound for a session the store does
// not hold, ErrNoForkPoint for a point that names no user prompt, and
// sessionfile.ErrCorrupt for a parent that cannot be read.
func (s *Store) Fork(ctx context.Context, id string, at ForkPoint) (Forked, error) {
	parent, err := s.Get(ctx, id)
	if err != nil {
		return Forked{}, err
	}
	msgs, err := sessionfile.Load(parent.Path)
	if err != nil {
		return Forked{}, fmt.Errorf("forking session %s: %w", id, err)
	}
	i, err := Cut(msgs, at)
	if err != nil {
		return Forked{}, fmt.Errorf("forking session %s: %w", id, err)
	}
	f := Forked{At: i, Message: msgs[i], MessageID: MessageID(msgs[i])}
	newID := NewID()
	// The fork belongs to whom the parent belongs.
	opt := sessionfile.Options{CWD: parent.CWD, Parent: id, ForkIndex: i, ForkMessage: f.MessageID, Owner: parent.Owner}
	if err := sessionfile.Create(s.Path(newID), opt, msgs[:i]); err != nil {
		return Forked{}, fmt.Errorf("forking session %s: %w", id, err)
	}
	if f.Entry, err = s.Get(ctx, newID); err != nil {
		return Forked{}, fmt.Errorf("forking session %s: %w", id, err)
	}
	return f, nil
}

// Branch keeps msgs, the whole transcript of stored session id as it was
// before an undo cut it back to its first at messages, as a new session
// (fresh id, working directory cwd) linked to id as a fork made at
// position at: the undone turns stay in the store as a branch of the
// tree beside what the session goes on with, so nothing that was sent is
// lost. The new file appears whole or not at all.
func (s *Store) Branch(ctx context.Context, id, cwd string, msgs []llm.Message, at int) (Entry, error) {
	if at < 0 || at >= len(msgs) {
		return Entry{}, fmt.Errorf("keeping the undone turns of session %s: position %d is outside its %d messages", id, at, len(msgs))
	}
	newID := NewID()
	opt := sessionfile.Options{CWD: cwd, Parent: id, ForkIndex: at, ForkMessage: MessageID(msgs[at])}
	if info, err := sessionfile.ReadInfo(s.Path(id)); err == nil {
		opt.Owner = info.Owner // the branch belongs to whom the session belongs
	}
	if err := sessionfile.Create(s.Path(newID), opt, msgs); err != nil {
		return Entry{}, fmt.Errorf("keeping the undone turns of session %s: %w", id, err)
	}
	e, err := s.Get(ctx, newID)
	if err != nil {
		return Entry{}, fmt.Errorf("keeping the undone turns of session %s: %w", id, err)
	}
	return e, nil
}
