package agent

import (
	"fmt"

	"zot.dev/zot/sdk/wire"
)

// The loop's decisions are a pure step: given what the last model call of
// a prompt came back with (an Outcome), Decide says what happens next;
// given the step that just ran its tools, AfterTools says whether another
// model call follows. Neither reads a clock, a goroutine or the agent: the
// loop that carries the effects out (the model call, the tools, the
// events) is an executor. Prompt is the in-process one, and the default;
// an executor that runs the same steps elsewhere (a durable workflow whose
// model and tool calls are activities) decides with the same two
// functions, so both end a turn for the same reasons.

// Outcome is what a prompt's step ended with: the input of Decide.
type Outcome struct {
	// Step counts the model calls of the prompt from 1.
	Step int
	// MaxSteps is the prompt's step limit.
	MaxSteps int
	// Stop is how the model ended its answer: end_turn, length or
	// refusal.
	Stop wire.StopReason
	// Reason is the provider's reason for a refusal or a cut answer.
	Reason string
	// Calls is how many tool calls the answer holds.
	Calls int
	// Empty says why the answer is empty (no text, no tool call); "" when
	// it is not.
	Empty string
	// OverBudget says why the prompt's cost budget is spent; "" while it
	// is not.
	OverBudget string
}

// Action is what a step's Decision does next.
type Action uint8

// The actions of a Decision.
const (
	// ActionEnd ends the step with turn_end{Stop, Reason}; the prompt ends
	// unless a steer waits and Steerable says one more step may answer it.
	ActionEnd Action = iota + 1
	// ActionRefuse ends the step with turn_end{refusal, Reason} and
	// removes the prompt's messages from the transcript.
	ActionRefuse
	// ActionFail ends the step with turn_end{error} and the prompt with
	// Err.
	ActionFail
	// ActionAnswerUnrun ends the step with turn_end{Stop, Reason} and
	// answers its calls with error results without running them.
	ActionAnswerUnrun
	// ActionRunTools ends the step with turn_end{tool_use} and runs its
	// calls; AfterTools decides what follows.
	ActionRunTools
)

// Decision is what Decide says follows a step.
type Decision struct {
	// Action is what happens next.
	Action Action
	// Stop and Reason are the step's turn_end.
	Stop   wire.StopReason
	Reason string
	// Steerable is set with ActionEnd when a steer that came during the
	// step may get one more step.
	Steerable bool
	// Err is the prompt's error with ActionFail.
	Err *Error
}

// Decide returns what follows a step that ended with o.
func Decide(o Outcome) Decision {
	switch {
	case o.Stop == wire.StopRefusal:
		return Decision{Action: ActionRefuse, Stop: wire.StopRefusal, Reason: o.Reason}
	case o.Empty != "":
		// Nothing came back: a success would be a silent empty answer.
		e := &Error{Code: wire.CodeProviderError, Message: o.Empty}
		return Decision{Action: ActionFail, Stop: wire.StopError, Reason: e.Message, Err: e}
	case o.Calls == 0:
		return Decision{Action: ActionEnd, Stop: o.Stop, Reason: o.Reason, Steerable: o.Step < o.MaxSteps}
	case o.Stop == wire.StopLength:
		// Every provider's length stop with calls says why, whether or not
		// the provider did.
		reason := o.Reason
		if reason == "" {
			reason = lengthWithCallsReason
		}
		return Decision{Action: ActionAnswerUnrun, Stop: wire.StopLength, Reason: reason}
	case o.OverBudget != "":
		// The budget is spent: the calls it asked for do not run.
		return Decision{Action: ActionAnswerUnrun, Stop: wire.StopMaxCost, Reason: o.OverBudget}
	}
	return Decision{Action: ActionRunTools, Stop: wire.StopToolUse}
}

// AfterTools returns the error that ends a prompt whose step ran its
// tools, nil when another model call follows: the step limit.
func AfterTools(step, maxSteps int) *Error {
	if step < maxSteps {
		return nil
	}
	return &Error{
		Code:    wire.CodeMaxSteps,
		Message: fmt.Sprintf("max steps (%d) reached before the model finished", maxSteps),
	}
}

// lengthWithCallsReason is the turn_end reason of a step the output limit
// ended with tool calls, when the provider gave none of its own.
const lengthWithCallsReason = "the output limit ended the answer before its tool calls could run"
