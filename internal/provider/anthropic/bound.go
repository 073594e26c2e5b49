package anthropic

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// Bound thinking (Anthropic's "preserved thinking", from Claude 5.1 on):
// the API checks that nothing before a thinking block that comes back has
// changed since the block was produced — the top-level system prompt, the
// tools, and every earlier message — and that no thinking block between
// others was left out. A block that fails the check makes the request fail
// with a 400 that no retry fixes
// (platform.claude.com/docs/en/build-with-claude/preserved-thinking/
// prefix-checks). So each thinking block records a fingerprint of its
// prefix and the model that produced it, and a request leaves out the
// blocks of another model and every thinking block from the first one
// whose prefix no longer matches (that one invalidates the later ones).

// prefixHash is the running fingerprint of a request's prefix: system
// prompt, tools, then each message's encoding (cache_control marks are
// added after encoding, and the vendor leaves them out of the check too).
type prefixHash struct{ h hash.Hash }

// newPrefixHash starts the fingerprint of a request with system and tools.
func newPrefixHash(system string, tools []byte) *prefixHash {
	p := &prefixHash{h: sha256.New()}
	p.part([]byte(system))
	p.part(tools)
	return p
}

// part adds one length-prefixed part.
func (p *prefixHash) part(b []byte) {
	var n [8]byte
	for i, l := 0, uint64(len(b)); i < 8; i++ {
		n[i] = byte(l >> (8 * i))
	}
	p.h.Write(n[:])
	p.h.Write(b)
}

// message adds one message by its encoding f; a message written in place
// (its encoding holds none of its text) is added by its texts.
func (p *prefixHash) message(m *llm.Message, f []byte) {
	p.part(f)
	if reqbody.IsInPlace(f) {
		for _, b := range m.Content {
			if t, ok := b.(*llm.TextBlock); ok {
				p.part([]byte(t.Text))
			}
		}
	}
}

// requestPrefix returns the fingerprint of a whole request's prefix, which
// the thinking blocks of its answer are bound to.
func requestPrefix(req *llm.Request, system string, tools []byte, frags [][]byte) string {
	ph := newPrefixHash(system, tools)
	for i, f := range frags {
		ph.message(&req.Messages[i], f)
	}
	return ph.sum()
}

// sum returns the fingerprint so far.
func (p *prefixHash) sum() string {
	return hex.EncodeToString(p.h.Sum(nil)[:16])
}

// sendable returns the messages of req with the thinking blocks of this
// provider that may not be sent back left out: those of another model
// than req.Model (the API would drop them itself, but zot does not count
// on it), and, for a model with bound thinking, the first block whose
// prefix no longer matches and every block after it. frags are the
// encodings of req.Messages; the prefix of a block is compared with the
// messages before it as they are sent, with their own left-out blocks
// left out. It returns req.Messages itself when nothing is left out.
func sendable(req *llm.Request, system string, tools []byte, frags [][]byte) ([]llm.Message, error) {
	msgs := req.Messages
	copied := false
	var ph *prefixHash
	if req.BoundThinking && hasPrefix(msgs) {
		ph = newPrefixHash(system, tools)
	}
	cascade := false
	for i := range msgs {
		var kept []llm.Block
		dropped := false
		for j, b := range msgs[i].Content {
			t, ok := b.(*llm.ThinkingBlock)
			drop := ok && t.Provider == providerName &&
				(cascade || t.Model != "" && t.Model != req.Model)
			if ok && !drop && ph != nil && t.Provider == providerName && t.Prefix != "" && t.Prefix != ph.sum() {
				drop, cascade = true, true
			}
			if drop && !dropped {
				dropped = true
				kept = append([]llm.Block(nil), msgs[i].Content[:j]...)
			} else if dropped && !drop {
				kept = append(kept, b)
			}
		}
		f := frags[i]
		if dropped {
			if !copied {
				msgs, copied = append([]llm.Message(nil), msgs...), true
			}
			msgs[i].Content = kept
			if ph != nil && !cascade {
				var err error
				if f, err = encodeBlocks(&msgs[i]); err != nil {
					return nil, err
				}
			}
		}
		if ph != nil && !cascade {
			ph.message(&msgs[i], f)
		}
	}
	return msgs, nil
}

// hasPrefix reports whether a thinking block of msgs records its prefix.
func hasPrefix(msgs []llm.Message) bool {
	for i := range msgs {
		for _, b := range msgs[i].Content {
			if t, ok := b.(*llm.ThinkingBlock); ok && t.Prefix != "" {
				return true
			}
		}
	}
	return false
}

// stamp records on the thinking blocks of msg the model and, for a model
// with bound thinking, the prefix they were produced under.
func stamp(msg *llm.Message, model, prefix string) {
	for _, b := range msg.Content {
		if t, ok := b.(*llm.ThinkingBlock); ok {
			t.Model, t.Prefix = model, prefix
		}
	}
}
