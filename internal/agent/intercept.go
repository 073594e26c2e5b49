package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"zot.dev/zot/internal/llm"
)

// DefaultInterceptTimeout bounds one interceptor call when the
// interceptor sets no timeout of its own.
const DefaultInterceptTimeout = 5 * time.Second

// OrderApproval is the Order of the interceptor that asks the embedder to
// approve a tool call: it runs after every guard, so what is approved is
// what will run.
const OrderApproval = 1 << 20

// Interceptor steers the loop at three points. Every function is
// optional. Interceptors run on the agent's goroutine, one after another
// (see Chain for the order), each under a context that ends after its
// Timeout; one must return promptly once its context ends.
type Interceptor struct {
	// Name says who decided, in reasons and diagnostics (e.g. "ext:guard").
	Name string
	// Order places the interceptor in the chain: lower runs first; equal
	// orders run in the order they were added.
	Order int
	// Timeout bounds each call; 0 means DefaultInterceptTimeout and a
	// negative value means no bound other than the prompt's own context.
	Timeout time.Duration
	// FailClosed turns a timeout or a failure (a Verdict with Err) into a
	// block. By default such a call is ignored: an interceptor that does
	// not answer never stalls or stops the agent.
	FailClosed bool

	// BeforePrompt runs once at the start of each prompt, after its
	// user_message and before the first turn_start: a gate that waits for
	// what the prompt needs (the extensions to start, say) and may add
	// interceptors and observers of its own, which then see the prompt
	// from its first turn_start on. It cannot block the prompt; it is not
	// bounded by Timeout, only by ctx, the prompt's own context.
	BeforePrompt func(ctx context.Context)
	// BeforeTurn runs before each model call of a prompt; step counts
	// from 1. A block ends the step with turn_end{stop:"error"} and the
	// prompt fails with code blocked, quoting the reason. Args and Text
	// are ignored.
	BeforeTurn func(ctx context.Context, step int) Verdict
	// BeforeTool runs before each tool call that is about to run (not for
	// calls with invalid arguments or unknown tools). A block answers the
	// call with an error result quoting the reason; Args rewrites the
	// arguments the tool (and the interceptors after this one) see. The
	// transcript keeps the arguments the model wrote.
	BeforeTool func(ctx context.Context, call ToolCall) Verdict
	// AfterMessage runs on each assistant message before it is kept,
	// including the partial text kept after a failure. msg is what
	// clients will be shown (an earlier interceptor may have replaced its
	// text) and must not be modified. A block drops the message: it is
	// neither kept nor shown, its tool calls do not run, and the step ends
	// with turn_end{stop:"error"}. Text replaces the text clients are
	// shown; the transcript keeps what the model wrote, so the model sees
	// its own words on later turns.
	AfterMessage func(ctx context.Context, msg *llm.Message) Verdict
}

// ToolCall is a tool call about to run, as BeforeTool sees it.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON object the call will run with.
	Args json.RawMessage
}

// Verdict is an interceptor's decision. The zero Verdict lets the action
// go on unchanged.
type Verdict struct {
	// Block refuses the action.
	Block bool
	// Reason says why it was blocked.
	Reason string
	// Args, for BeforeTool, replaces the call's arguments. It must be a
	// JSON object that gives no name twice (see llm.CheckToolArgs);
	// anything else fails the call with an error result. Ignored when
	// Block is set.
	Args json.RawMessage
	// Text, for AfterMessage, replaces the text clients are shown.
	// Ignored when Block is set.
	Text *string
	// Err reports that the interceptor could not decide (its process
	// crashed, say). The verdict is then ignored, or counts as a block
	// when the interceptor is FailClosed.
	Err error
}

// Chain is an ordered list of interceptors that can change while the
// agent runs: each step reads the chain as it is when the step gets to
// it. It is safe for concurrent use.
type Chain struct {
	mu    sync.Mutex
	next  uint64
	items atomic.Pointer[[]chained]
}

// chained is one interceptor in the chain.
type chained struct {
	Interceptor
	key uint64 // insertion number; ties of Order keep it ascending
}

// Add puts i in the chain and returns the function that takes it out
// again (safe to call more than once).
func (c *Chain) Add(i Interceptor) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	key := c.next
	list := append(slices.Clone(c.list()), chained{Interceptor: i, key: key})
	// The keys are unique, so the order is total. sort.Slice rather than
	// slices.SortFunc: the generic sort is compiled anew for each struct
	// type, 10–20 KB of code that every start maps in.
	sort.Slice(list, func(i, j int) bool {
		if list[i].Order != list[j].Order {
			return list[i].Order < list[j].Order
		}
		return list[i].key < list[j].key
	})
	c.items.Store(&list)
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		list := slices.DeleteFunc(slices.Clone(c.list()), func(x chained) bool { return x.key == key })
		c.items.Store(&list)
	}
}

// list returns the current interceptors; the slice must not be modified.
func (c *Chain) list() []chained {
	if c == nil {
		return nil
	}
	if p := c.items.Load(); p != nil {
		return *p
	}
	return nil
}

// Len returns how many interceptors the chain holds.
func (c *Chain) Len() int { return len(c.list()) }

// call runs one interceptor function under its deadline and applies the
// timeout and failure policy. It returns the verdict to act on.
func call(ctx context.Context, i *chained, f func(context.Context) Verdict) Verdict {
	timeout := i.Timeout
	if timeout == 0 {
		timeout = DefaultInterceptTimeout
	}
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	v := f(cctx)
	if ctx.Err() != nil {
		return Verdict{} // the prompt itself ended; the caller aborts
	}
	failure := v.Err
	if failure == nil && cctx.Err() != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		failure = fmt.Errorf("no answer within %s", timeout)
	}
	if failure == nil {
		return v
	}
	if i.FailClosed {
		return Verdict{Block: true, Reason: i.label() + ": " + llm.ErrorText(failure)}
	}
	return Verdict{}
}

func (i *chained) label() string {
	if i.Name != "" {
		return i.Name
	}
	return "interceptor"
}

// beforePrompt runs the chain's BeforePrompt functions, in order, until
// ctx ends.
func (c *Chain) beforePrompt(ctx context.Context) {
	for _, i := range c.list() {
		if i.BeforePrompt == nil {
			continue
		}
		i.BeforePrompt(ctx)
		if ctx.Err() != nil {
			return
		}
	}
}

// BeforeTurn runs the chain's BeforeTurn functions for step, as the
// agent does before the step's model call: the first block wins. An
// executor whose steps run elsewhere asks the session's chain this way.
func (c *Chain) BeforeTurn(ctx context.Context, step int) Verdict { return c.beforeTurn(ctx, step) }

// beforeTurn runs the chain's BeforeTurn functions; the first block wins.
func (c *Chain) beforeTurn(ctx context.Context, step int) Verdict {
	for _, i := range c.list() {
		if i.BeforeTurn == nil {
			continue
		}
		v := call(ctx, &i, func(ctx context.Context) Verdict { return i.BeforeTurn(ctx, step) })
		if ctx.Err() != nil || v.Block {
			return v
		}
	}
	return Verdict{}
}

// beforeTool runs the chain's BeforeTool functions; the first block wins
// and rewritten arguments carry on to the next interceptor. The returned
// verdict's Args holds the final arguments when any were rewritten.
// BeforeTool runs the chain's BeforeTool functions on tc, as the agent
// does before a call of its own runs: the first block wins, rewritten
// arguments carry on (in the returned Verdict's Args). A sub-agent's calls
// go through its parent's chain this way.
func (c *Chain) BeforeTool(ctx context.Context, tc ToolCall) Verdict { return c.beforeTool(ctx, tc) }

func (c *Chain) beforeTool(ctx context.Context, tc ToolCall) Verdict {
	var out Verdict
	for _, i := range c.list() {
		if i.BeforeTool == nil {
			continue
		}
		v := call(ctx, &i, func(ctx context.Context) Verdict { return i.BeforeTool(ctx, tc) })
		if ctx.Err() != nil || v.Block {
			return v
		}
		if v.Args != nil {
			if err := llm.CheckToolArgs(v.Args); err != nil {
				return Verdict{Block: true, Reason: fmt.Sprintf("%s replaced the arguments with unusable ones: %v", i.label(), err)}
			}
			tc.Args = v.Args
			out.Args = v.Args
		}
	}
	return out
}

// afterMessage runs the chain's AfterMessage functions on what clients
// will be shown; the first block wins and replaced text carries on. The
// returned verdict's Text holds the final shown text when any was
// replaced.
func (c *Chain) afterMessage(ctx context.Context, msg llm.Message) Verdict {
	var out Verdict
	for _, i := range c.list() {
		if i.AfterMessage == nil {
			continue
		}
		shown := msg
		v := call(ctx, &i, func(ctx context.Context) Verdict { return i.AfterMessage(ctx, &shown) })
		if ctx.Err() != nil || v.Block {
			return v
		}
		if v.Text != nil {
			msg.Content = replaceText(msg.Content, *v.Text)
			t := *v.Text
			out.Text = &t
		}
	}
	return out
}
