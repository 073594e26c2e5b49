package durable

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
)

// A sub-agent's turn (the task tool's child session) is a child workflow
// of the turn whose task call started it, so the cluster shows the tree,
// an abort of the turn reaches the child and the child's history is its
// own. Only the parent's workflow can start it: the client asks with
// ChildUpdate, which returns once the child has started; the client then
// waits for the child's end as for any turn. The child belongs to the
// task call: when the call ends it has ended too (the daemon answers the
// call with the child's end), else it is cancelled then (the call was
// interrupted, its daemon gone); its usage counts toward the parent's
// turn from then on.

// ChildUpdate is the update that starts a sub-agent's turn as a child
// workflow of the turn.
const ChildUpdate = "zot.child"

// ChildStart is a ChildUpdate's input.
type ChildStart struct {
	// ID is the child's workflow id.
	ID string
	// Call is the id of the task call (of this turn) that starts it.
	Call  string
	Input TurnInput
}

// childWait bounds how long a turn waits, after a task call ended, for
// the end of a child the call started before cancelling it: a call the
// daemon answered ended with its child's end, which the cluster reports
// to the parent a moment later.
const childWait = time.Minute

// children are the child workflows a turn started, by task call.
type children struct {
	byCall map[string][]*child
}

type child struct {
	id     string
	future workflow.ChildWorkflowFuture
	cancel workflow.CancelFunc
	from   models.MeterState
}

// listen installs the turn's ChildUpdate handler; a child is started
// under abortCtx, so an abort of the turn cancels it.
func (k *children) listen(ctx, abortCtx workflow.Context) error {
	k.byCall = map[string][]*child{}
	return workflow.SetUpdateHandlerWithOptions(ctx, ChildUpdate, func(uctx workflow.Context, cs ChildStart) (string, error) {
		cctx, cancel := workflow.WithCancel(abortCtx)
		cctx = workflow.WithChildOptions(cctx, workflow.ChildWorkflowOptions{
			WorkflowID: cs.ID,
			// A child the turn leaves behind (it failed or ended before the
			// call did) is asked to stop.
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			// A cancelled child is waited for: it ends its turn (its events,
			// its usage) as an aborted one does.
			WaitForCancellation: true,
		})
		f := workflow.ExecuteChildWorkflow(cctx, WorkflowName, cs.Input)
		var ex workflow.Execution
		if err := f.GetChildWorkflowExecution().Get(uctx, &ex); err != nil {
			cancel()
			return "", fmt.Errorf("starting the sub-agent's turn %s: %w", cs.ID, err)
		}
		k.byCall[cs.Call] = append(k.byCall[cs.Call], &child{id: cs.ID, future: f, cancel: cancel, from: cs.Input.Meter})
		return ex.RunID, nil
	}, workflow.UpdateHandlerOptions{
		// A turn that ends while a child starts (it was aborted) fails
		// the update: the client reports the sub-agent's turn as not run.
		UnfinishedPolicy: workflow.HandlerUnfinishedPolicyAbandon,
		Validator: func(_ workflow.Context, cs ChildStart) error {
			switch {
			case cs.ID == "" || cs.Call == "":
				return errors.New("a sub-agent's turn needs its id and the task call that starts it")
			case abortCtx.Err() != nil:
				return errors.New("the turn that would start the sub-agent is aborted")
			}
			return nil
		},
	})
}

// settle ends the children of task call id, which has just ended: ran
// says the call was answered (its children have ended or are about to),
// else they are cancelled. It returns m with the usage of those that
// finished added.
func (k *children) settle(ctx workflow.Context, id string, ran bool, m models.MeterState) models.MeterState {
	kids := k.byCall[id]
	delete(k.byCall, id)
	for _, c := range kids {
		if ran && !c.future.IsReady() {
			tctx, stop := workflow.WithCancel(ctx)
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(c.future, func(workflow.Future) {})
			sel.AddFuture(workflow.NewTimer(tctx, childWait), func(workflow.Future) {})
			sel.Select(ctx)
			stop()
		}
		if !ran || !c.future.IsReady() {
			c.cancel()
		}
		var out TurnOutput
		if err := c.future.Get(ctx, &out); err != nil {
			workflow.GetLogger(ctx).Warn("a sub-agent's turn ended without its result", "child", c.id, "error", err)
			continue
		}
		m = spent(m, c.from, out.Meter)
	}
	return m
}

// spent returns m with what a meter spent from from to to added.
func spent(m, from, to models.MeterState) models.MeterState {
	m.Usage = m.Usage.Add(llm.Usage{
		Input:      to.Usage.Input - from.Usage.Input,
		Output:     to.Usage.Output - from.Usage.Output,
		CacheRead:  to.Usage.CacheRead - from.Usage.CacheRead,
		CacheWrite: to.Usage.CacheWrite - from.Usage.CacheWrite,
	})
	m.Pico += to.Pico - from.Pico
	m.Unpriced = m.Unpriced || to.Unpriced
	return m
}
