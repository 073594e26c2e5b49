package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/sdk/wire"
)

// NotStartedText is the result of a tool call no worker of the tool
// queue (%s) took within the tool start timeout (%v): nothing of it ran.
const NotStartedText = "not run: no worker of the tool queue %q (the workers holding the session's working directory) took the call within %v; nothing of it ran. Tell the user: a worker for this directory may be down."

// notStarted reports whether err is an activity's that no worker took
// in time.
func notStarted(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// InterruptedText is the result of a tool call whose worker went away
// while it ran: the call may have done part of its work, and it is not
// run again.
const InterruptedText = "interrupted: the worker running this call stopped before it finished; the call may have done part of its work and was not run again. Check its effects before calling it again."

// DaemonGoneText is the result of a call of a tool living in the daemon
// holding the session, whose daemon went away while it ran.
const DaemonGoneText = "interrupted: the zot daemon running this call went away before it finished; the call may have done part of its work and was not run again. Check its effects before calling it again."

// NotRunText begins the result of a call of a tool living in the daemon
// that never reached it.
const NotRunText = "the call did not run: "

// Timeouts of the turn's activities.
const (
	// HeartbeatTimeout is how long a running activity may go without a
	// heartbeat before its worker counts as gone.
	HeartbeatTimeout = 10 * time.Second
	// CallTimeout bounds one model call or tool call.
	CallTimeout = time.Hour
	// ToolStartTimeout is how long a tool call waits, by default, for a
	// worker holding the working directory to take it
	// (TurnInput.ToolStartTimeout).
	ToolStartTimeout = time.Minute
)

// Turn is the workflow of one prompt: the agent's loop, whose decisions
// are agent.Decide's (made in the step activity, where the answer is)
// and agent.AfterTools, and whose effects are activities. A model call
// is retried on another worker when its worker goes away (its result,
// once recorded, is never asked for again); a tool call runs at most
// once: one whose worker went away is answered as interrupted. A task
// call's sub-agent runs as a child workflow of the turn (child.go).
func Turn(ctx workflow.Context, in TurnInput) (TurnOutput, error) {
	abortCtx, abort := workflow.WithCancel(ctx)
	reason := "aborted"
	workflow.Go(ctx, func(g workflow.Context) {
		workflow.GetSignalChannel(g, AbortSignal).Receive(g, &reason)
		abort()
	})
	// A client that waits for the turn after the one that submitted it
	// went away points the activities scheduled from now on at itself.
	workflow.Go(ctx, func(g workflow.Context) {
		ch := workflow.GetSignalChannel(g, AttachSignal)
		for {
			var a Attach
			ch.Receive(g, &a)
			in.Turn.attach(a)
		}
	})
	toolStart := in.ToolStartTimeout
	if toolStart <= 0 {
		toolStart = ToolStartTimeout
	}
	modelCtx := workflow.WithActivityOptions(abortCtx, workflow.ActivityOptions{
		StartToCloseTimeout: CallTimeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 5 * time.Second, MaximumAttempts: 5},
	})
	toolCtx := workflow.WithActivityOptions(abortCtx, workflow.ActivityOptions{
		TaskQueue:              in.Turn.ToolQueue,
		StartToCloseTimeout:    CallTimeout,
		ScheduleToStartTimeout: toolStart,
		HeartbeatTimeout:       HeartbeatTimeout,
		WaitForCancellation:    true,
		// The second attempt runs nothing: it returns what the first
		// recorded, or answers the call as interrupted.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 2},
	})
	// Asking runs once: a person may be answering an approval.
	askCtx := workflow.WithActivityOptions(abortCtx, workflow.ActivityOptions{
		StartToCloseTimeout: CallTimeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	// A call of a tool living in the daemon is taken by a worker of the
	// tool queue (handed over eagerly, as the other calls), which hands
	// it to the daemon: the daemon emits the call's events and decides
	// its abort itself (the call's context is not the abort's: an abort
	// reaches the call through the daemon, whose answer, "aborted", is
	// the call's result); a second attempt, after its worker went away,
	// waits for the same run in the daemon.
	daemonCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              in.Turn.ToolQueue,
		StartToCloseTimeout:    CallTimeout,
		ScheduleToStartTimeout: toolStart,
		HeartbeatTimeout:       HeartbeatTimeout,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 2},
	})
	// The turn's last events go out even when the turn was cancelled (a
	// sub-agent's turn whose parent was aborted).
	detached, _ := workflow.NewDisconnectedContext(ctx)
	answerCtx := workflow.WithActivityOptions(detached, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 10},
	})
	var kids children
	if err := kids.listen(ctx, abortCtx); err != nil {
		return TurnOutput{}, err
	}
	out := TurnOutput{Transcript: in.Transcript, Meter: in.Meter, Runs: 1}
	first, results := 1, []string(nil)
	if c := in.Continued; c != nil {
		first, results = c.Step, c.Results
		out.Steps, out.Activities, out.Runs = c.Steps, c.Activities, c.Runs+1
	}
	seq := func() int64 {
		out.Activities++
		return int64(out.Activities) << seqShift
	}
	// end answers calls with text (none: only then emits) and ends the
	// turn with turn_end{stop} unless stop is "". Calls it could not
	// answer have no result: the turn must not go on without them.
	end := func(calls []Call, text string, stop wire.StopReason, msg string) error {
		var then []json.RawMessage
		if stop != "" {
			then = append(then, (&wire.TurnEndEvent{Stop: stop, Error: msg}).AppendJSON(nil))
		}
		if len(calls) == 0 && len(then) == 0 {
			return nil
		}
		var ans AnswerOutput
		if err := workflow.ExecuteActivity(answerCtx, AnswerActivity, AnswerInput{Turn: in.Turn, Calls: calls, Text: text, Then: then, Seq: seq()}).Get(ctx, &ans); err != nil {
			workflow.GetLogger(ctx).Error("answering calls that did not run", "turn", in.Turn.ID, "error", err)
			return fmt.Errorf("answering the calls that did not run: %w", err)
		}
		out.Results = append(out.Results, ans.Results...)
		return nil
	}
	// lost is why calls of the step could not be answered: the turn ends
	// with it after the step's calls.
	var lost error
	// inDaemon runs a call of a tool living in the daemon; an MCP
	// server's first on a worker of the tool queue (under the abort, as a
	// built-in tool's), in the daemon when that worker cannot run it.
	inDaemon := func(ti ToolInput) workflow.Future {
		if ti.Call.MCP == "" {
			return workflow.ExecuteActivity(daemonCtx, ToolActivity, ti)
		}
		f, set := workflow.NewFuture(ctx)
		workflow.Go(ctx, func(g workflow.Context) {
			var to ToolOutput
			err := workflow.ExecuteActivity(toolCtx, ToolActivity, ti).Get(g, &to)
			if err != nil || to.Fallback == "" {
				set.Set(to, err)
				return
			}
			ti.Call.MCP, ti.Seq = "", seq()
			set.Chain(workflow.ExecuteActivity(daemonCtx, ToolActivity, ti))
		})
		return f
	}
	for step := first; ; step++ {
		// Between two steps no call runs, so no sub-agent's turn either
		// (each ends with its task call): the next run starts with none.
		if step > first && len(kids.byCall) == 0 && workflow.AllHandlersFinished(ctx) &&
			continueAsNew(ctx, in.HistoryEvents) && !aborted(ctx, abort, &reason) {
			next := in
			next.Transcript, next.Meter = out.Transcript, out.Meter
			next.Continued = &Carry{Step: step, Results: results, Steps: out.Steps, Activities: out.Activities, Runs: out.Runs}
			return TurnOutput{}, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
		}
		var so StepOutput
		err := workflow.ExecuteActivity(modelCtx, StepActivity, StepInput{
			Turn: in.Turn, Transcript: out.Transcript, Results: results, UserIndex: in.UserIndex,
			Step: step, MaxSteps: in.MaxSteps, Meter: out.Meter, Seq: seq(),
		}).Get(ctx, &so)
		out.Steps++
		if err != nil {
			out.Results = results
			if abortCtx.Err() != nil {
				out.Aborted = true
				_ = end(nil, "", wire.StopAborted, reason)
				return out, nil
			}
			out.Code, out.Message = string(wire.CodeProviderError), "the model call failed on every worker that tried it: "+err.Error()
			_ = end(nil, "", wire.StopError, out.Message)
			return out, nil
		}
		out.Transcript, out.Meter, out.Results, results = so.Transcript, so.Meter, nil, nil
		if so.Offer != "" {
			in.Turn.Offer = so.Offer // what the session offers now, for its calls and the steps after
		}
		switch {
		case so.Aborted:
			out.Aborted = true
			return out, nil
		case so.Code != "":
			out.Code, out.Message = so.Code, so.Message
			return out, nil
		case endsTurn(so):
			// The step's activity has told the client this end already.
			return out, nil
		}
		// The calls run one after another, in order, except consecutive
		// calls that may run side by side: those pass the session's
		// interceptors in order first, then start together, each result
		// emitted as it comes; the results are kept in the calls' order.
		calls := so.Calls
		for i := 0; i < len(calls); {
			if abortCtx.Err() != nil {
				out.Results = results
				if err := end(calls[i:], agent.AbortedText, "", ""); err != nil && lost == nil {
					lost = err
				}
				results = out.Results
				break
			}
			// A group is of calls on the workers or of calls in the daemon
			// (the task tool's: sub-agents), which passes them through the
			// session's interceptors itself as each starts.
			j := i + 1
			for calls[i].Concurrent && j < len(calls) && calls[j].Concurrent && calls[j].Daemon == calls[i].Daemon {
				j++
			}
			group := calls[i:j]
			i = j
			var verdicts []fleet.ToolVerdict
			if len(group) > 1 && in.Turn.Intercept != "" && !group[0].Daemon {
				var ask AskOutput
				// A group whose asking failed has each call ask as it runs.
				if err := workflow.ExecuteActivity(askCtx, AskActivity, AskInput{Turn: in.Turn, Calls: group}).Get(ctx, &ask); err == nil && len(ask.Verdicts) == len(group) {
					verdicts = ask.Verdicts
				}
			}
			runs := make([]workflow.Future, len(group))
			for k, c := range group {
				ti := ToolInput{Turn: in.Turn, Call: c, Seq: seq()}
				if verdicts != nil {
					ti.Verdict = &verdicts[k]
				}
				if c.Daemon {
					runs[k] = inDaemon(ti)
					continue
				}
				runs[k] = workflow.ExecuteActivity(toolCtx, ToolActivity, ti)
			}
			for k, c := range group {
				var to ToolOutput
				err := runs[k].Get(ctx, &to)
				out.Meter = kids.settle(ctx, c.ID, err == nil && !to.Interrupted, out.Meter)
				if err == nil {
					results = append(results, to.Result)
					continue
				}
				text := InterruptedText
				switch {
				case abortCtx.Err() != nil && (!c.Daemon || c.MCP != ""):
					text = "aborted: " + reason
				case notStarted(err):
					text = fmt.Sprintf(NotStartedText, in.Turn.ToolQueue, toolStart)
				}
				out.Results = results
				if err := end([]Call{c}, text, "", ""); err != nil && lost == nil {
					lost = err
				}
				results = out.Results
			}
		}
		if lost != nil {
			out.Code, out.Message = string(wire.CodeInternal), lost.Error()
		}
		if abortCtx.Err() != nil {
			out.Results = results
			out.Aborted = true
			_ = end(nil, "", wire.StopAborted, reason)
			return out, nil
		}
		if lost != nil {
			out.Results = results
			_ = end(nil, "", wire.StopError, out.Message)
			return out, nil
		}
		if e := agent.AfterTools(step, in.MaxSteps); e != nil {
			out.Results = results
			out.Code, out.Message = string(e.Code), e.Message
			return out, nil
		}
	}
}

// continueAsNew reports whether the run's history has grown enough for
// the turn to go on in a new run: past limit events (when limit is
// set), or when the cluster suggests it (its history nearing the
// cluster's caps).
func continueAsNew(ctx workflow.Context, limit int) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || (limit > 0 && info.GetCurrentHistoryLength() >= limit)
}

// aborted takes an abort signal that reached the run but was not handled
// yet (the turn must not continue as new past it, and lose it): it
// records its reason, cancels the turn and reports true.
func aborted(ctx workflow.Context, abort workflow.CancelFunc, reason *string) bool {
	ch := workflow.GetSignalChannel(ctx, AbortSignal)
	var r string
	if ch.ReceiveAsync(&r) {
		*reason = r
		abort()
		return true
	}
	return false
}

// endsTurn says the turn ends after step so with what so holds: a
// transcript and usage, no error, no abort. The step's activity then
// posts that end to the client after its events (Activities.Step), and
// the client answers the turn without waiting for the workflow to
// close; so the turn's output after such a step must be so's transcript
// and meter, nothing more.
func endsTurn(so StepOutput) bool {
	return !so.Aborted && so.Code == "" && so.Action != agent.ActionRunTools
}
