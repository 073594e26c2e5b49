package providertest

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// LongText is a text over reqbody.LongText bytes, made of characters JSON
// escapes, so that a request holding it has its text spliced in when the
// body is read rather than kept in the body's bytes.
func LongText() string {
	return strings.Repeat("<a&b> \"q\" \\ \n\t\u2028é\x01", reqbody.LongText/16)
}

// LongTextSpliced checks that a user message of long text (one text
// alone, and one followed by an empty text and a short one), sent after a
// short exchange, is left out of the caches and the body's bytes and still
// read as encode would have encoded it. For each message, caches gives a
// build function over fresh caches, called twice (the second time from
// what the first cached); each body read must have as many bytes as its
// Len says, be valid JSON and hold prefix, encode's bytes and "]". When
// caches also gives reused, the second build must have taken every
// message's encoding (the long one's stand-in too) from the cache.
func LongTextSpliced(t *testing.T, model, system, prefix string, encode func(*llm.Message) ([]byte, error),
	caches func() (build func(*llm.Request) (*reqbody.Payload, error), reused func() int)) {
	t.Helper()
	long := LongText()
	for _, blocks := range [][]llm.Block{
		{&llm.TextBlock{Text: long}},
		{&llm.TextBlock{Text: long}, &llm.TextBlock{}, &llm.TextBlock{Text: "tail"}},
	} {
		msg := llm.Message{Role: llm.RoleUser, Content: blocks}
		enc, err := encode(&msg)
		if err != nil {
			t.Fatal(err)
		}
		req := &llm.Request{Model: model, System: system, Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "first"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}},
			msg,
		}}
		build, reused := caches()
		needle := append(append([]byte(prefix), enc...), ']')
		for round := range 2 {
			p, err := build(req)
			if err != nil {
				t.Fatal(err)
			}
			sent, err := io.ReadAll(p.Reader())
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(sent)) != p.Len() || !json.Valid(sent) {
				t.Fatalf("round %d: %d bytes read, Len says %d, valid JSON %v", round, len(sent), p.Len(), json.Valid(sent))
			}
			if !bytes.Contains(sent, needle) {
				t.Fatalf("round %d, %d blocks: the long message is not encoded as encode encodes it", round, len(blocks))
			}
		}
		if reused != nil {
			if n := reused(); n != len(req.Messages) {
				t.Errorf("second request reused %d encodings, want %d", n, len(req.Messages))
			}
		}
	}
}
