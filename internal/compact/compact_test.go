package compact

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
)

// fakeSummariser answers every call with a summary naming the call, and
// records the requests.
type fakeSummariser struct {
	reply func(n int, req *llm.Request) (string, error)
	mu    sync.Mutex
	reqs  []*llm.Request
}

func (f *fakeSummariser) Name() string { return "fake" }

func (f *fakeSummariser) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return &llm.Response{}, err
	}
	text := "summary " + strconv.Itoa(n)
	if f.reply != nil {
		var err error
		if text, err = f.reply(n, req); err != nil {
			return &llm.Response{Usage: llm.Usage{Input: 7}}, err
		}
	}
	sink(llm.Event{Kind: llm.EventStart})
	return &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: text}}},
		Stop:    llm.StopEndTurn,
		Usage:   llm.Usage{Input: 100, Output: 10},
	}, nil
}

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: s}}}
}

func assistant(s string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: s}}}
}

func callMsg(id string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.TextBlock{Text: "calling"},
		&llm.ToolCallBlock{ID: id, Name: "read", Args: []byte(`{"path":"a.go"}`)},
	}}
}

func resultMsg(id string) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{
		CallID: id, Name: "read", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "no such file"}},
	}}}
}

func roles(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role))
	}
	return strings.Join(out, " ")
}

var testModel = models.Model{ID: "m", Provider: "fake", ContextWindow: 200_000, MaxOutput: 8192, Input: 1, Output: 5}

func TestSplit(t *testing.T) {
	msgs := []llm.Message{
		user("a"), assistant("b"), user("c"), callMsg("1"), resultMsg("1"), assistant("d"),
	}
	for _, c := range []struct{ keep, want int }{
		{0, 6}, {1, 5}, {2, 3}, {3, 3}, {4, 2}, {6, 0}, {10, 0}, {-1, 6},
	} {
		if got := Split(msgs, c.keep); got != c.want {
			t.Errorf("Split(keep %d) = %d, want %d", c.keep, got, c.want)
		}
	}
	// Several tool rounds in a row move the cut past all of them.
	rounds := []llm.Message{user("a"), callMsg("1"), resultMsg("1"), callMsg("2"), resultMsg("2")}
	if got := Split(rounds, 1); got != 3 {
		t.Errorf("Split over rounds = %d, want 3", got)
	}
}

func TestCompactOneCall(t *testing.T) {
	f := &fakeSummariser{}
	msgs := []llm.Message{
		user("fix the parser"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			&llm.ThinkingBlock{Text: "secret reasoning"},
			&llm.TextBlock{Text: "reading"},
			&llm.ToolCallBlock{ID: "1", Name: "read", Args: []byte(`{"path":"parser.go"}`)},
		}},
		resultMsg("1"),
		{Role: llm.RoleUser, Content: []llm.Block{&llm.ImageBlock{MIME: "image/png", Data: make([]byte, 1234)}}},
		assistant("a"), user("b"), assistant("c"), user("d"),
	}
	var calls []llm.Usage
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.FixedZone("X", 3600))
	res, err := Compact(context.Background(), msgs, Options{
		Provider: f, Model: testModel, Instructions: "keep the parser details",
		Now:    func() time.Time { return now },
		OnCall: func(u llm.Usage) { calls = append(calls, u) },
	})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if res.Summary != "summary 1" || res.Calls != 1 || res.Summarised != 4 || len(calls) != 1 ||
		res.Usage != (llm.Usage{Input: 100, Output: 10}) {
		t.Errorf("result = %+v, calls %v", res, calls)
	}
	if roles(res.Messages) != "user assistant user assistant user" || res.Messages[1].Text() != "a" {
		t.Fatalf("messages = %s", roles(res.Messages))
	}
	sum := res.Messages[0]
	if !IsSummary(&sum) || sum.Meta[MetaSummarised] != "4" || !strings.HasSuffix(sum.Text(), "summary 1") ||
		!sum.Time.Equal(now) || sum.Time.Location() != time.UTC {
		t.Errorf("summary message = %+v", sum)
	}
	req := f.reqs[0]
	if len(req.Tools) != 0 || req.Model != "m" || req.MaxTokens != maxSummaryTokens || req.System != systemPrompt {
		t.Errorf("request = %+v", req)
	}
	text := req.Messages[0].Text()
	for _, want := range []string{
		"<conversation>", "fix the parser", `[tool call read 1] {"path":"parser.go"}`,
		"[result of 1, an error]\nno such file", "[image: image/png, 1234 bytes]",
		"keep the parser details", "## Next steps",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("request lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "secret reasoning") || strings.Contains(text, "[user]\nb") {
		t.Errorf("request holds thinking or the kept tail:\n%s", text)
	}
	// The input is untouched.
	if len(msgs) != 8 || msgs[0].Text() != "fix the parser" {
		t.Error("Compact modified its input")
	}
}

func TestCompactNothing(t *testing.T) {
	f := &fakeSummariser{}
	_, err := Compact(context.Background(), []llm.Message{user("a"), assistant("b")}, Options{Provider: f, Model: testModel})
	if !errors.Is(err, ErrNothingToCompact) || len(f.reqs) != 0 {
		t.Errorf("err = %v, calls = %d", err, len(f.reqs))
	}
	// A negative KeepTail compacts everything.
	res, err := Compact(context.Background(), []llm.Message{user("a"), assistant("b")}, Options{Provider: f, Model: testModel, KeepTail: -1})
	if err != nil || len(res.Messages) != 1 {
		t.Errorf("keep none: %v, %d messages", err, len(res.Messages))
	}
}

func TestCompactErrors(t *testing.T) {
	msgs := []llm.Message{user("a"), assistant("b"), user("c"), assistant("d"), user("e"), assistant("f")}
	bad := &llm.Error{Provider: "fake", Status: 500, Message: "down"}
	var usage []llm.Usage
	f := &fakeSummariser{reply: func(int, *llm.Request) (string, error) { return "", bad }}
	_, err := Compact(context.Background(), msgs, Options{Provider: f, Model: testModel, OnCall: func(u llm.Usage) { usage = append(usage, u) }})
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 500 {
		t.Errorf("err = %v", err)
	}
	if len(usage) != 1 || usage[0].Input != 7 {
		t.Errorf("the failed call's usage was not reported: %v", usage)
	}
	empty := &fakeSummariser{reply: func(int, *llm.Request) (string, error) { return "  ", nil }}
	if _, err := Compact(context.Background(), msgs, Options{Provider: empty, Model: testModel}); !errors.Is(err, ErrEmptySummary) {
		t.Errorf("empty summary: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compact(ctx, msgs, Options{Provider: &fakeSummariser{}, Model: testModel}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestCompactChunked summarises an older part far larger than the model's
// context window: in chunks, then summaries of summaries, until one call
// merges them.
func TestCompactChunked(t *testing.T) {
	small := models.Model{ID: "tiny", ContextWindow: 4000, MaxOutput: 4096}
	s := newSummariser(Options{Model: small})
	var msgs []llm.Message
	for i := range 40 {
		msgs = append(msgs, user("question "+strconv.Itoa(i)+" "+strings.Repeat("q", 700)))
		msgs = append(msgs, assistant("answer "+strconv.Itoa(i)+" "+strings.Repeat("é", 400)))
	}
	msgs = append(msgs, user("latest"), assistant("tail"))
	f := &fakeSummariser{reply: func(n int, req *llm.Request) (string, error) {
		return "summary " + strconv.Itoa(n) + " " + strings.Repeat("s", 600), nil
	}}
	res, err := Compact(context.Background(), msgs, Options{Provider: f, Model: small, KeepTail: 2})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	var parts, merges int
	for i, req := range f.reqs {
		text := req.Messages[0].Text()
		if n := len(text); n > s.chunkBytes+2000 {
			t.Errorf("request %d carries %d bytes, over the chunk size %d", i, n, s.chunkBytes)
		}
		if req.MaxTokens != small.ContextWindow/4 {
			t.Errorf("request %d max tokens = %d", i, req.MaxTokens)
		}
		switch {
		case strings.Contains(text, "<conversation>"):
			parts++
			if !strings.Contains(text, " of a long conversation") {
				t.Errorf("chunk request %d does not say it is a part", i)
			}
		case strings.Contains(text, "<summaries>"):
			merges++
		}
	}
	if parts < 10 || merges < 2 || res.Calls != len(f.reqs) || res.Calls != parts+merges {
		t.Errorf("calls: %d parts, %d merges, %d reported", parts, merges, res.Calls)
	}
	// The last call merged everything into the summary.
	if res.Summary != "summary "+strconv.Itoa(len(f.reqs))+" "+strings.Repeat("s", 600) {
		t.Errorf("summary = %q", res.Summary[:min(40, len(res.Summary))])
	}
	last := f.reqs[len(f.reqs)-1].Messages[0].Text()
	if !strings.Contains(last, "<summaries>") || strings.Contains(last, "<conversation>") {
		t.Errorf("the last call is not a merge")
	}
	// Every message of the older part reached some chunk, in order.
	var all strings.Builder
	for _, req := range f.reqs {
		if text := req.Messages[0].Text(); strings.Contains(text, "<conversation>") {
			all.WriteString(text)
		}
	}
	pos := 0
	for i := range 40 {
		idx := strings.Index(all.String()[pos:], "question "+strconv.Itoa(i)+" ")
		if idx < 0 {
			t.Fatalf("question %d missing or out of order", i)
		}
		pos += idx
	}
	if roles(res.Messages) != "user user assistant" || res.Messages[1].Text() != "latest" {
		t.Errorf("messages = %s", roles(res.Messages))
	}
}

func TestCompactSummariesThatDoNotShrink(t *testing.T) {
	small := models.Model{ID: "tiny", ContextWindow: 4000}
	var msgs []llm.Message
	for range 20 {
		msgs = append(msgs, user(strings.Repeat("x", 2000)), assistant("ok"))
	}
	f := &fakeSummariser{reply: func(int, *llm.Request) (string, error) { return strings.Repeat("y", 5000), nil }}
	if _, err := Compact(context.Background(), msgs, Options{Provider: f, Model: small}); err == nil ||
		!strings.Contains(err.Error(), "too long to merge") {
		t.Errorf("err = %v", err)
	}
}

func TestPack(t *testing.T) {
	got := pack([]string{"aaaa", "bbbb", "cccc"}, 10)
	if len(got) != 2 || got[0] != "aaaa\n\nbbbb" || got[1] != "cccc" {
		t.Errorf("pack = %q", got)
	}
	// A long part is cut at line breaks or rune boundaries.
	long := strings.Repeat("é", 10) + "\n" + strings.Repeat("ü", 10)
	for _, piece := range pack([]string{long}, 15) {
		if len(piece) > 15 || !strings.HasPrefix(piece, "é") && !strings.HasPrefix(piece, "ü") && !strings.HasPrefix(piece, "\n") {
			t.Errorf("piece %q", piece)
		}
	}
	if strings.Join(cut(long, 15), "") != long {
		t.Error("cut loses text")
	}
	if got := pack(nil, 10); len(got) != 1 || got[0] != "" {
		t.Errorf("pack(nil) = %q", got)
	}
	if strings.Join(cut("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", 4), "") != "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80" {
		t.Error("cut loses invalid UTF-8")
	}
}

// TestSummaryReasonsAtItsQuietest: a summarising call to a model that
// reasons asks for the lowest level it takes, and where that level still
// reasons its output cap leaves room for the reasoning, which the vendors
// count against it: a cap of the summary alone could be spent before the
// summary began, and an empty summary fails the compaction every time.
func TestSummaryReasonsAtItsQuietest(t *testing.T) {
	c := models.Builtin()
	for _, tc := range []struct {
		provider, id string
		level        string
		maxTokens    int
	}{
		{"anthropic", "claude-sonnet-5-5", "none", maxSummaryTokens}, // thinks by default: turned off
		{"anthropic", "claude-opus-4-5", "none", maxSummaryTokens},   // a budget model: none
		{"anthropic", "claude-fable-5-2", "low", maxSummaryTokens + thinkingAllowance},
		{"openai", "gpt-6.1-sol", "low", maxSummaryTokens + thinkingAllowance},
		{"openai", "gpt-5", "minimal", maxSummaryTokens + thinkingAllowance},
		{"gemini", "gemini-3-pro", "minimal", maxSummaryTokens + thinkingAllowance},
		{"openai", "gpt-4.1", "", maxSummaryTokens}, // no reasoning
		{"ollama", "llama3", "", maxSummaryTokens},  // unknown: no level sent
	} {
		f := &fakeSummariser{}
		msgs := []llm.Message{user("a"), assistant("b"), user("c"), assistant("d"), user("e"), assistant("f")}
		if _, err := Compact(context.Background(), msgs, Options{Provider: f, Model: c.Resolve(tc.provider, tc.id), KeepTail: 2}); err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if r := f.reqs[0]; r.Reasoning != tc.level || r.MaxTokens != tc.maxTokens {
			t.Errorf("%s: reasoning %q, max tokens %d; want %q, %d", tc.id, r.Reasoning, r.MaxTokens, tc.level, tc.maxTokens)
		}
	}
}
