package engine

import (
	"slices"

	"zot.dev/zot/sdk/wire"
)

// AbortWork cancels only the work submitted with id (Work.ID): running, it
// is aborted as Abort aborts it; queued, it is dropped, and ends, after
// the running work's done, with its own turn_end{aborted} and done; ended,
// or never submitted, nothing happens and the result says so. An abort
// that names its work thus never reaches the work after it, however late
// it comes. answer is called as Abort calls it. The zero id names no work.
func (s *Session) AbortWork(id wire.ID, answer func(wire.AbortResult)) wire.AbortResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emitMu.Lock()
	var res wire.AbortResult
	cur := s.current
	if cur != nil && (id.IsZero() || cur.id != id) {
		cur = nil
	}
	// As in Abort: work whose last turn_end is out has ended as it said.
	if cur != nil && !cur.ended {
		res.Aborted = true
		cur.abortAnswered = true
	}
	var dropped []*job
	if cur == nil && !id.IsZero() {
		if i := slices.IndexFunc(s.queue, func(j *job) bool { return j.id == id }); i >= 0 {
			dropped = []*job{s.queue[i]}
			s.queue = slices.Delete(s.queue, i, i+1)
			res.Dropped = 1
		}
	}
	if answer != nil {
		answer(res)
	}
	s.emitMu.Unlock()
	if cur != nil {
		// Cancelled even when it had ended its turn, as in Abort.
		cur.cancel()
	}
	s.dropLocked(dropped, "dropped from the queue by abort")
	return res
}
