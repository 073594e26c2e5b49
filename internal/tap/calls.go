package tap

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// callKey keys, in a model call's context, the session the call is
// made for: the HTTP exchanges under it are that session's.
type callKey struct{}

// Middleware returns the model and tool middleware that record a
// session's calls (session names it at each call), for
// engine.HostConfig.SessionMiddleware.
func (t *Tap) Middleware(session func() string) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
	model := func(next agent.ModelFunc) agent.ModelFunc {
		return func(ctx context.Context, call agent.ModelCall, sink llm.Sink) (*llm.Response, error) {
			id := session()
			start := time.Now()
			seq := t.seq.Add(1) // its place is where it started
			events := 0
			resp, err := next(context.WithValue(ctx, callKey{}, id), call, func(ev llm.Event) {
				events++
				sink(ev)
			})
			r := &Record{Seq: seq, At: start.UTC(), Kind: KindModel, Session: id, Dir: "out",
				Method: modelName(call), Step: call.Step, Events: events,
				Ms: msSince(start), Outcome: outcome(ctx, err)}
			if call.Kind == agent.ModelCallCompaction {
				r.Method += " (compaction)"
			}
			if resp != nil {
				r.Stop, r.TokIn, r.TokOut = string(resp.Stop), resp.Usage.Input+resp.Usage.CacheRead+resp.Usage.CacheWrite, resp.Usage.Output
			}
			if err != nil {
				r.Error = err.Error()
			}
			t.add(r)
			return resp, err
		}
	}
	tool := func(next agent.ToolFunc) agent.ToolFunc {
		return func(ctx context.Context, run agent.ToolRun) (tools.Result, error) {
			start := time.Now()
			seq := t.seq.Add(1)
			res, err := next(ctx, run)
			r := &Record{Seq: seq, At: start.UTC(), Kind: KindTool, Session: session(), Method: run.Name,
				ToolID: run.ID, Size: len(run.Args), Ms: msSince(start), Outcome: outcome(ctx, err)}
			switch {
			case err != nil:
				r.Error = err.Error()
			case res.IsError:
				r.Outcome = "error"
				r.Error = resultText(res, 300)
			}
			t.add(r)
			return res, err
		}
	}
	return []agent.ModelMiddleware{model}, []agent.ToolMiddleware{tool}
}

// modelName is the provider and the model of a call ("anthropic
// claude-sonnet-4-5"), once when they are the same word.
func modelName(call agent.ModelCall) string {
	if call.Request.Model == "" || call.Request.Model == call.Provider {
		return call.Provider
	}
	return call.Provider + " " + call.Request.Model
}

// outcome says how a call ended: ok, aborted (its context ended) or
// error.
func outcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "ok"
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return "aborted"
	}
	return "error"
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// resultText is the start of a tool result's text.
func resultText(res tools.Result, max int) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*llm.TextBlock); ok {
			b.WriteString(t.Text)
		}
		if b.Len() >= max {
			break
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// HTTPClient returns a client that sends through base's transport (the
// default one when nil) and records each exchange: method, URL without
// secrets, status, time to the headers and to the body's end, and the
// count of streamed events (SSE data lines) in the body.
func (t *Tap) HTTPClient(base *http.Client) *http.Client {
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &roundTripper{t: t, next: rt}
	return &c
}

type roundTripper struct {
	t    *Tap
	next http.RoundTripper
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	session, _ := req.Context().Value(callKey{}).(string)
	r := &Record{Seq: rt.t.seq.Add(1), At: start.UTC(), Kind: KindHTTP, Session: session, Dir: "out",
		Method: req.Method + " " + req.URL.Host, URL: CleanURL(req.URL)}
	if req.ContentLength > 0 {
		r.Size = int(req.ContentLength)
	}
	resp, err := rt.next.RoundTrip(req)
	r.TTFB = msSince(start)
	if err != nil {
		r.Ms, r.Outcome, r.Error = r.TTFB, outcome(req.Context(), err), err.Error()
		rt.t.add(r)
		return resp, err
	}
	r.Status = resp.StatusCode
	resp.Body = &countingBody{ReadCloser: resp.Body, rec: r, start: start, t: rt.t, lineStart: true}
	return resp, nil
}

// countingBody counts a response's SSE data lines and records the
// exchange when the body ends or is closed.
type countingBody struct {
	io.ReadCloser
	t         *Tap
	rec       *Record
	start     time.Time
	lineStart bool
	match     int // bytes of "data:" matched at a line's start
	once      sync.Once
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '\n':
			b.lineStart, b.match = true, 0
		case b.lineStart && b.match < 5 && c == "data:"[b.match]:
			b.match++
			if b.match == 5 {
				b.rec.Events++
				b.lineStart = false
			}
		default:
			b.lineStart = false
		}
	}
	if err != nil {
		b.done(err)
	}
	return n, err
}

func (b *countingBody) Close() error {
	err := b.ReadCloser.Close()
	b.done(nil)
	return err
}

func (b *countingBody) done(err error) {
	b.once.Do(func() {
		r := b.rec
		r.Ms = msSince(b.start)
		r.Outcome = "ok"
		if r.Status >= 400 {
			r.Outcome = "error"
		}
		if err != nil && !errors.Is(err, io.EOF) {
			r.Outcome, r.Error = "error", err.Error()
		}
		b.t.add(r)
	})
}

// CleanURL is u without what may be secret: no user information, and
// the values of query parameters that name a key, token, secret,
// signature or password replaced.
func CleanURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			if secretName(k) {
				q[k] = []string{Redacted}
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}
