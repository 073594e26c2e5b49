package reqbody

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"

	"zot.dev/zot/internal/llm"
)

// MessageCache holds the encodings of the messages of the last request,
// by position. A provider whose encoding of a message depends on the
// message alone (not on its neighbours) uses one to encode only the
// messages that are new since its last request.
//
// Messages are recognised by their content, not by identity: the cache
// keeps a 64-bit seeded hash of each message's role and blocks (every
// field of every block type), so a transcript that was rewritten, cut or
// changed in place is encoded afresh where it differs.
//
// It is safe for concurrent use. The zero value is ready.
type MessageCache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	seeded  bool
	entries []entry
	spare   []entry // the array of the entries before, reused for the next
	reused  int     // encodings the last Encode took from the cache
}

type entry struct {
	sum    uint64
	enc    []byte
	usable bool // false: the message had a block the hash does not know
}

// Encode returns the encoding of each message of msgs, in order. It calls
// encode for a message only when the message at the same position in the
// previous call had other content. A nil c encodes every message. The
// returned slice is the caller's; the encodings in it are shared with the
// cache and must not be modified.
func (c *MessageCache) Encode(msgs []llm.Message, encode func(*llm.Message) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	if c == nil {
		for i := range msgs {
			b, err := encode(&msgs[i])
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			out[i] = b
		}
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seeded {
		c.seed, c.seeded = maphash.MakeSeed(), true
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	next := c.spare[:0]
	if cap(next) < len(msgs) {
		next = make([]entry, len(msgs), len(msgs)+len(msgs)/4+8)
	}
	next = next[:len(msgs)]
	reused := 0
	for i := range msgs {
		h.Reset()
		known := writeMessage(&h, &msgs[i])
		sum := h.Sum64()
		if known && i < len(c.entries) && c.entries[i].usable && c.entries[i].sum == sum {
			next[i] = c.entries[i]
			out[i] = next[i].enc
			reused++
			continue
		}
		b, err := encode(&msgs[i])
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		next[i] = entry{sum: sum, enc: b, usable: known}
		out[i] = b
	}
	clear(c.entries) // drop the encodings only the old array holds
	c.entries, c.spare = next, c.entries
	c.reused = reused
	return out, nil
}

// Reused returns how many encodings the last successful Encode took from
// the cache instead of calling encode.
func (c *MessageCache) Reused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reused
}

// Block type tags in the hash.
const (
	tagText byte = iota + 1
	tagThinking
	tagImage
	tagToolCall
	tagToolResult
)

// writeMessage hashes what a provider encodes of m: its role and its
// blocks. Every variable-length field is written with its length, so no
// two different messages write the same bytes. It reports false when m
// holds a block of a type it does not know, whose content it cannot hash.
func writeMessage(h *maphash.Hash, m *llm.Message) bool {
	writeString(h, string(m.Role))
	return writeBlocks(h, m.Content)
}

func writeBlocks(h *maphash.Hash, blocks []llm.Block) bool {
	known := true
	writeLen(h, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			_ = h.WriteByte(tagText)
			writeString(h, b.Text)
			writeString(h, b.Phase)
		case *llm.ThinkingBlock:
			_ = h.WriteByte(tagThinking)
			writeString(h, b.Provider)
			writeString(h, b.Text)
			writeBool(h, b.Raw)
			writeString(h, b.Signature)
			writeBool(h, b.Redacted)
			writeString(h, b.Data)
			writeString(h, b.ID)
			writeString(h, b.Model)
			writeString(h, b.Prefix)
		case *llm.ImageBlock:
			_ = h.WriteByte(tagImage)
			writeString(h, b.MIME)
			writeLen(h, len(b.Data))
			_, _ = h.Write(b.Data)
		case *llm.ToolCallBlock:
			_ = h.WriteByte(tagToolCall)
			writeString(h, b.ID)
			writeString(h, b.Name)
			writeLen(h, len(b.Args))
			_, _ = h.Write(b.Args)
			writeString(h, b.ArgsError)
			writeString(h, b.Signature)
			writeBool(h, b.Cut)
		case *llm.ToolResultBlock:
			_ = h.WriteByte(tagToolResult)
			writeString(h, b.CallID)
			writeString(h, b.Name)
			writeBool(h, b.IsError)
			known = writeBlocks(h, b.Content) && known
		default:
			known = false
		}
	}
	return known
}

func writeString(h *maphash.Hash, s string) {
	writeLen(h, len(s))
	_, _ = h.WriteString(s)
}

func writeLen(h *maphash.Hash, n int) {
	var b [binary.MaxVarintLen64]byte
	_, _ = h.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

func writeBool(h *maphash.Hash, v bool) {
	if v {
		_ = h.WriteByte(1)
		return
	}
	_ = h.WriteByte(0)
}
