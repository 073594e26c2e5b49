package subproc

import (
	"context"
	"time"
)

// Stop ends the child and its process group by a ladder:
//
//  1. close the child's stdin pipe (skipped without one) and wait up to
//     Command.StdinGrace for it to exit;
//  2. send SIGTERM to the group and wait up to Command.TermGrace for the
//     child to exit and the rest of the group with it;
//  3. send SIGKILL to the group.
//
// Stop moves on as soon as nothing of the group is left. When the child
// exits but other members of its group remain, it goes on to step 2 for
// them: Stop ends the whole group. When ctx ends, Stop goes straight to
// step 3.
//
// Stop returns once the child has been reaped and Done is closed, with how
// far it had to go (see [Process.Escalation]) and the child's Wait error.
// It may be called more than once and concurrently with Wait: one call runs
// the ladder, the others wait for it, each killing the group if its own ctx
// ends first, and all return the same.
func (p *Process) Stop(ctx context.Context) (Escalation, error) {
	if p.stopping.CompareAndSwap(false, true) {
		p.ladder(ctx)
	} else {
		select {
		case <-p.exited:
		case <-ctx.Done():
			_ = p.Kill()
		}
	}
	<-p.done
	return p.escalation, p.waitErr
}

// ladder runs Stop's steps.
func (p *Process) ladder(ctx context.Context) {
	if p.stdin != nil {
		// Also unblocks a Write in progress. Its error says at most that
		// the pipe was closed already.
		_ = p.stdin.Close()
		if p.await(ctx, p.stdinGrace, false) {
			return
		}
	}
	if ctx.Err() == nil && !p.gone() {
		_ = p.terminate()
		if p.await(ctx, p.termGrace, true) {
			return
		}
	}
	if !p.gone() {
		_ = p.Kill()
	}
	<-p.exited
}

// await waits up to d for the child to exit and reports whether nothing of
// the group is left. With group it keeps waiting, within d, for the rest of
// the group once the child has exited; without, it does not.
func (p *Process) await(ctx context.Context, d time.Duration, group bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-p.exited:
	case <-deadline.C:
		return false
	case <-ctx.Done():
		return false
	}
	if !group {
		return !p.GroupAlive()
	}
	poll := time.NewTicker(groupPoll)
	defer poll.Stop()
	for p.GroupAlive() {
		select {
		case <-poll.C:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// gone reports whether the child has been reaped and no member of its
// group is left.
func (p *Process) gone() bool { return p.hasExited() && !p.GroupAlive() }

// Kill sends SIGKILL to the child's process group: the child, if it has not
// been reaped, and whatever it started that is still in the group (where
// there are no process groups, only the child). It does not wait; Wait or
// Done tell when the child is gone. Killing a group that no longer exists
// is not an error.
//
// Once the child has been reaped and every member of its group has exited,
// the group's id is free for reuse by the system; call Kill while the
// group may still have members (see GroupAlive), not long after.
func (p *Process) Kill() error {
	p.record(Killed)
	return p.signalGroup(sigKill)
}

// terminate sends SIGTERM to the group (kills the child where there are no
// signals).
func (p *Process) terminate() error {
	if !hasGroups {
		return p.Kill()
	}
	p.record(Terminated)
	return p.signalGroup(sigTerm)
}

// GroupAlive reports whether any process of the child's group still runs:
// the child until it exits, and what it started that stayed in its group.
// On Linux, processes that have exited but not been reaped (zombies) do not
// count: an orphan's zombie may linger where the init process does not reap
// them. Where there are no process groups it reports whether the child
// itself runs.
func (p *Process) GroupAlive() bool {
	if !hasGroups {
		return !p.hasExited()
	}
	return groupAlive(p.pid)
}
