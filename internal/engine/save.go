package engine

import "fmt"

// Save brings the session file, if any, up to date with the transcript
// now, without waiting for the running work to end (which saves it
// too). The session saves each message as it is committed (the user's,
// the assistant's, a round of tool results) before its event is
// delivered, so that a kill mid-turn loses nothing committed: a file cut
// after a tool call and before its results loads with those calls
// answered as aborted. What is saved is written, not yet synced to the
// disk: that follows each piece of work's end, in the background, and
// Close.
func (s *Session) Save() error {
	if s.store == nil {
		return nil
	}
	// A copy: a caller may be on any goroutine while work runs.
	if err := s.store.Save(s.agent.Transcript()); err != nil {
		return fmt.Errorf("zot: saving the session: %w", err)
	}
	return nil
}
