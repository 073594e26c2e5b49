package compact

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
)

// Sizing of the summarising calls.
const (
	// maxSummaryTokens caps the output of one summarising call.
	maxSummaryTokens = 4096
	// promptOverheadTokens is room kept for the system prompt and the
	// instructions around the conversation text.
	promptOverheadTokens = 1024
	// bytesPerToken converts the token budget to bytes of text. Real
	// tokenisers average about four bytes of English or code per token;
	// three leaves a margin for denser text.
	bytesPerToken = 3
	// maxRounds bounds the rounds of merging chunk summaries.
	maxRounds = 8
	// thinkingAllowance is added to the output cap of a call to a model
	// that reasons even at its lowest level: the vendors count reasoning
	// against the output limit, and a cap of maxSummaryTokens alone can be
	// spent on reasoning before the summary begins (an empty summary
	// fails the compaction, every time).
	thinkingAllowance = 16_384
)

// quietest returns the lowest reasoning level m takes, for summarising
// calls (none, minimal or low), "" for a model that does not reason or
// takes no level.
func quietest(m models.Model) string {
	if !m.Reasoning && !m.AlwaysReasons && !m.ThinksByDefault {
		return ""
	}
	for _, l := range []string{"none", "minimal", "low"} {
		if m.TakesEffort(l) == nil {
			return l
		}
	}
	return ""
}

// summariser makes the summarising calls of one compaction and counts them.
type summariser struct {
	o          Options
	outTokens  int    // output cap of each call
	level      string // the reasoning level of each call (see quietest)
	chunkBytes int    // most conversation text one call carries
	usage      llm.Usage
	calls      int
}

func newSummariser(o Options) *summariser {
	window := o.Model.ContextWindow
	if window <= 0 {
		window = models.DefaultContextWindow
	}
	out := maxSummaryTokens
	level := quietest(o.Model)
	if level != "none" && (o.Model.Reasoning || o.Model.AlwaysReasons || o.Model.ThinksByDefault) {
		out += thinkingAllowance
	}
	if o.Model.MaxOutput > 0 {
		out = min(out, o.Model.MaxOutput)
	}
	out = max(min(out, window/4), 1)
	// A quarter of the window is kept back for misestimated token counts.
	budget := max(window*3/4-out-promptOverheadTokens, window/8, 1)
	return &summariser{o: o, outTokens: out, chunkBytes: budget * bytesPerToken, level: level}
}

// summarise returns one summary of msgs: from one call when their text fits
// one call, else by summarising chunks and merging the summaries.
func (s *summariser) summarise(ctx context.Context, msgs []llm.Message) (string, error) {
	parts := make([]string, len(msgs))
	for i := range msgs {
		parts[i] = render(&msgs[i])
	}
	chunks := pack(parts, s.chunkBytes)
	if len(chunks) == 1 {
		return s.call(ctx, conversationPrompt(chunks[0], s.o.Instructions, 1, 1))
	}
	summaries := make([]string, len(chunks))
	for i, c := range chunks {
		sum, err := s.call(ctx, conversationPrompt(c, s.o.Instructions, i+1, len(chunks)))
		if err != nil {
			return "", fmt.Errorf("part %d of %d: %w", i+1, len(chunks), err)
		}
		summaries[i] = sum
	}
	for range maxRounds {
		labelled := make([]string, len(summaries))
		for i, sum := range summaries {
			labelled[i] = "[summary of part " + strconv.Itoa(i+1) + "]\n" + sum
		}
		groups := pack(labelled, s.chunkBytes)
		if len(groups) == 1 {
			return s.call(ctx, mergePrompt(groups[0], s.o.Instructions))
		}
		if len(groups) >= len(summaries) {
			return "", fmt.Errorf("compacting: the summaries of %d parts are too long to merge within the model's context window", len(summaries))
		}
		next := make([]string, len(groups))
		for i, g := range groups {
			sum, err := s.call(ctx, mergePrompt(g, s.o.Instructions))
			if err != nil {
				return "", fmt.Errorf("merging summaries: %w", err)
			}
			next[i] = sum
		}
		summaries = next
	}
	return "", fmt.Errorf("compacting: the summaries did not fit one call after %d rounds of merging", maxRounds)
}

// call makes one summarising call with prompt as the only message and
// returns the answer's text.
func (s *summariser) call(ctx context.Context, prompt string) (string, error) {
	now := time.Now
	if s.o.Now != nil {
		now = s.o.Now
	}
	req := &llm.Request{
		Model:     s.o.Model.ID,
		System:    systemPrompt,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: prompt}}, Time: now().UTC()}},
		MaxTokens: s.outTokens,
		Reasoning: s.level,
	}
	// The same facts of the model as a prompt's calls carry: how it takes
	// its reasoning, whether it always reasons, its output limit.
	s.o.Model.Describe(req)
	resp, err := s.o.Provider.Stream(ctx, req, func(llm.Event) {})
	if resp != nil && (err == nil || resp.Usage != (llm.Usage{})) {
		s.calls++
		s.usage = s.usage.Add(resp.Usage)
		if s.o.OnCall != nil {
			s.o.OnCall(resp.Usage)
		}
	}
	if err != nil {
		return "", fmt.Errorf("summarising: %w", err)
	}
	if resp == nil {
		return "", errors.New("summarising: the provider returned no response")
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", ErrEmptySummary
	}
	return text, nil
}

// pack groups parts, in order, into chunks of at most limit bytes joined by
// blank lines. A part longer than limit is cut into pieces of at most limit
// bytes, at a line break in the second half of a piece when there is one,
// never inside a UTF-8 character.
func pack(parts []string, limit int) []string {
	const sep = "\n\n"
	var chunks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
	}
	for _, p := range parts {
		for _, piece := range cut(p, limit) {
			if cur.Len() > 0 && cur.Len()+len(sep)+len(piece) > limit {
				flush()
			}
			if cur.Len() > 0 {
				cur.WriteString(sep)
			}
			cur.WriteString(piece)
		}
	}
	flush()
	if len(chunks) == 0 {
		chunks = []string{""}
	}
	return chunks
}

// cut splits s into pieces of at most limit bytes (see pack).
func cut(s string, limit int) []string {
	limit = max(limit, utf8.UTFMax)
	var out []string
	for len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // not UTF-8: cut anywhere
			n = limit
		}
		if nl := strings.LastIndexByte(s[:n], '\n'); nl >= n/2 {
			n = nl + 1
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
