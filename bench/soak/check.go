package soak

import (
	"encoding/json"
	"fmt"

	"zot.dev/zot/sdk/wire"
)

// expect is a command sent to a process whose response has not been read.
type expect struct {
	id      wire.ID
	command string // the command the response must name; "" for a line that is not one
	// bad marks a line that is not a valid command: its response must fail
	// with code.
	bad  bool
	code wire.ErrorCode
	// idle is set when, as the client knew at sending, no work was running
	// or queued: every earlier prompt and compact had been answered and had
	// ended with its done. clear and set_model must then not be busy.
	idle bool
	all  bool // an abort with all
}

// work is a prompt or compact that was accepted and has not ended.
type work struct {
	id      wire.ID
	started bool // answered started, not queued
	aborted bool // an abort answered while it ran said it was cut
	dropped bool // an abort with all dropped it from the queue
	// Counted since it was accepted.
	events, calls, results int
	lastStop               wire.StopReason // of its last turn_end
	// errAfterAbort is set by an error event read after the abort's answer.
	errAfterAbort bool
	// ended is set by its last turn_end (any stop but tool_use): its
	// model calls are over, and an abort answered later does not cut it.
	ended bool
	// afterAbort lists the first event types read after the abort's
	// answer, for failure messages.
	afterAbort []string
}

// checker holds one process to the promises of docs/rpc.md, reading its
// frames in order: every command gets one response, in the order sent,
// naming it and echoing its id; answers to prompt, compact, abort,
// get_state, clear and set_model agree with the work the client knows is
// pending; events carry growing seqs and belong to the work at the head
// of the queue; each accepted prompt or compact ends with exactly one
// done, in order, an aborted or dropped one with turn_end{aborted} and no
// error event after the abort; every tool_call gets its tool_result.
type checker struct {
	pending []expect
	work    []*work
	seq     int64
	stats   *Stats
	// fail records a broken promise.
	fail func(format string, args ...any)
}

// idle reports whether the client knows of no work running or queued:
// no prompt or compact awaits its response or its done.
func (c *checker) idle() bool {
	if len(c.work) > 0 {
		return false
	}
	for _, e := range c.pending {
		if !e.bad && (e.command == "prompt" || e.command == "compact") {
			return false
		}
	}
	return true
}

// What the client knows of the session's queue is exact but for two
// moments it cannot see: when the work at the head of its list has ended
// (its done read) and the session has yet to make the next one current;
// and while the endings of dropped items are being written, when the
// session runs nothing. So the checks below hold the session to the
// possible states only; running says when the head is known to run.

// queued counts the unfinished work an item queued now waits behind: the
// running work and the queue, not the dropped items whose endings are on
// their way.
func (c *checker) queued() int {
	n := 0
	for _, w := range c.work {
		if !w.dropped {
			n++
		}
	}
	return n
}

// running reports whether the work at the head of the list is known to
// be the session's current work: it started at once, or events of it
// have been read.
func (c *checker) running() bool {
	if len(c.work) == 0 {
		return false
	}
	w := c.work[0]
	return !w.dropped && (w.started || w.events > 0)
}

// sent records a command written to the process.
func (c *checker) sent(e expect) {
	e.idle = c.idle()
	c.pending = append(c.pending, e)
	c.stats.Commands++
}

// frame checks one frame read from the process.
func (c *checker) frame(resp *wire.Response, ev wire.Event) {
	c.stats.Frames++
	if resp != nil {
		c.response(resp)
		return
	}
	c.event(ev)
}

func (c *checker) response(r *wire.Response) {
	if len(c.pending) == 0 {
		c.fail("a response when no command awaits one: %s %s", r.Command, r.ID)
		return
	}
	e := c.pending[0]
	c.pending = c.pending[1:]
	if r.Command != e.command || r.ID != e.id {
		c.fail("response to %q id %s, but the next command awaiting one is %q id %s: lost or out of order", r.Command, r.ID, e.command, e.id)
		return
	}
	if e.bad {
		c.stats.Malformed++
		if r.Success || r.Code != e.code {
			c.fail("malformed line (%s) answered success=%v code %q, want code %q", e.command, r.Success, r.Code, e.code)
		}
		return
	}
	switch e.command {
	case "prompt", "compact":
		c.started(e, r)
	case "abort":
		c.aborted(e, r)
	case "get_state":
		var st wire.StateResult
		if c.data(r, &st) && !st.Busy && len(c.work) > 0 {
			c.fail("get_state says idle while %d prompts or compacts have not ended", len(c.work))
		}
	case "clear", "set_model":
		switch {
		case r.Success && len(c.work) > 0:
			c.fail("%s succeeded while %d prompts or compacts have not ended", e.command, len(c.work))
		case r.Success:
		case r.Code == wire.CodeBusy && e.idle:
			c.fail("%s sent after the last done was read is answered busy", e.command)
		case r.Code != wire.CodeBusy && !(e.command == "set_model" && r.Code == wire.CodeUnknownModel):
			c.fail("%s failed with %q: %s", e.command, r.Code, r.Error)
		}
	default:
		if !r.Success {
			c.fail("%s failed with %q: %s", e.command, r.Code, r.Error)
		}
	}
}

// data decodes a successful response's data into v.
func (c *checker) data(r *wire.Response, v any) bool {
	if !r.Success {
		c.fail("%s failed with %q: %s", r.Command, r.Code, r.Error)
		return false
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		c.fail("%s data %s: %v", r.Command, r.Data, err)
		return false
	}
	return true
}

// started checks the answer to a prompt or compact and queues its work.
func (c *checker) started(e expect, r *wire.Response) {
	var res wire.StartResult
	if !c.data(r, &res) {
		return
	}
	q := c.queued()
	switch {
	case res.Started && q > 0:
		// Only the endings of dropped items may still be on their way.
		c.fail("%s %s started while %d earlier ones have not ended", e.command, e.id, q)
	case !res.Started && (res.Queued == nil || !*res.Queued || res.Position == nil):
		c.fail("%s %s neither started nor queued: %s", e.command, e.id, r.Data)
	case !res.Started && int(*res.Position) == q:
	case !res.Started && int(*res.Position) == q+1 && !c.running():
		// The head has not become current yet: it is in the queue too.
	case !res.Started:
		c.fail("%s %s queued at position %d behind %d unfinished, %d of them not dropped", e.command, e.id, *res.Position, len(c.work), q)
	}
	if e.command == "prompt" {
		c.stats.Prompts++
	} else {
		c.stats.Compacts++
	}
	c.work = append(c.work, &work{id: e.id, started: res.Started})
}

// aborted checks the answer to an abort and marks the work it cut.
func (c *checker) aborted(e expect, r *wire.Response) {
	var res wire.AbortResult
	if !c.data(r, &res) {
		return
	}
	q := c.queued()
	aborted := 0
	if res.Aborted {
		aborted = 1
	}
	switch {
	case res.Aborted && (len(c.work) == 0 || c.work[0].dropped || c.work[0].ended):
		c.fail("abort answered aborted=true while nothing ran that had not ended (%d unfinished, %d not dropped)", len(c.work), q)
	case !res.Aborted && c.running() && !c.work[0].ended:
		c.fail("abort answered aborted=false while %s ran", c.work[0].id)
	case e.all && aborted+int(res.Dropped) != q-c.endedHead():
		c.fail("abort all answered aborted=%v dropped=%d with %d unfinished, %d of them not dropped", res.Aborted, res.Dropped, len(c.work), q)
	case !e.all && res.Dropped != 0:
		c.fail("abort without all dropped %d", res.Dropped)
	}
	keepHead := res.Aborted || c.endedHead() == 1
	if res.Aborted {
		c.stats.Aborted++
		c.work[0].aborted = true
	}
	if !e.all {
		return
	}
	for i, w := range c.work {
		if w.dropped || i == 0 && keepHead {
			continue
		}
		w.dropped = true
		c.stats.Dropped++
	}
}

// endedHead is 1 when the work at the head of the list has had its last
// turn_end and awaits only its done: the session still has it, but no
// abort cuts it and no abort all drops it.
func (c *checker) endedHead() int {
	if len(c.work) > 0 && !c.work[0].dropped && c.work[0].ended {
		return 1
	}
	return 0
}

func (c *checker) event(ev wire.Event) {
	c.stats.Events++
	if s := ev.GetSeq(); s <= c.seq {
		c.fail("seq %d after %d (%s)", s, c.seq, ev.Type())
	} else {
		c.seq = s
	}
	if len(c.work) == 0 {
		c.fail("%s event of %s when no prompt or compact is unfinished", ev.Type(), ev.GetPromptID())
		return
	}
	w := c.work[0]
	if ev.GetPromptID() != w.id {
		c.fail("%s event of %s while %s has not ended", ev.Type(), ev.GetPromptID(), w.id)
		return
	}
	w.events++
	if w.aborted && len(w.afterAbort) < 12 {
		w.afterAbort = append(w.afterAbort, ev.Type())
	}
	switch x := ev.(type) {
	case *wire.ToolCallEvent:
		w.calls++
		c.stats.ToolCalls++
	case *wire.ToolResultEvent:
		w.results++
	case *wire.TurnEndEvent:
		w.lastStop = x.Stop
		w.ended = x.Stop != wire.StopToolUse
	case *wire.ErrorEvent:
		if w.aborted || w.dropped {
			w.errAfterAbort = true
		}
	case *wire.DoneEvent:
		c.done(w)
		c.work = c.work[1:]
	}
}

// done checks how a work ended.
func (c *checker) done(w *work) {
	c.stats.Dones++
	switch {
	case w.results != w.calls:
		c.fail("%s ended with %d tool results for %d tool calls", w.id, w.results, w.calls)
	case w.dropped && (w.events != 2 || w.lastStop != wire.StopAborted):
		c.fail("dropped %s ended with %d events, the last turn_end %q; want turn_end aborted, done", w.id, w.events, w.lastStop)
	case w.aborted && w.lastStop != wire.StopAborted:
		c.fail("aborted %s ended after turn_end %q, want aborted; events after the abort's answer: %v", w.id, w.lastStop, w.afterAbort)
	case w.errAfterAbort:
		c.fail("aborted %s sent an error event after the abort's answer", w.id)
	}
}

// String summarises what is outstanding, for failure messages.
func (c *checker) String() string {
	return fmt.Sprintf("%d commands await a response, %d prompts or compacts await their done, last seq %d", len(c.pending), len(c.work), c.seq)
}
