package engine

// Save brings the session file, if any, up to date with the transcript
// now, without waiting for the running work to end (which saves it
// too). A door calls it from its sink when a message is committed (the
// user's, the assistant's, a round of tool results), so that a crash
// mid-turn loses nothing committed: a file cut after a tool call and
// before its results loads with those calls answered as aborted.
func (s *Session) Save() error { return s.persist() }
