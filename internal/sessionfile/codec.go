package sessionfile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/wirecodec"
)

// record is one line of a session file: the header, a message, or a
// reset that drops everything before it (written by versions that
// appended the new transcript when compaction or clear rewrote it).
type record struct {
	Session *header           `json:"session,omitempty"`
	Reset   bool              `json:"reset,omitempty"`
	Role    string            `json:"role,omitempty"`
	Time    time.Time         `json:"time,omitzero"`
	Meta    map[string]string `json:"meta,omitempty"`
	Content []block           `json:"content,omitempty"`
}

// block is every kind of llm.Block, told apart by Type. It keeps what
// providers need to continue a conversation: thinking signatures, image
// bytes, raw tool arguments.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Phase     string          `json:"phase,omitempty"`
	Cut       bool            `json:"cut,omitempty"`
	Raw       bool            `json:"raw,omitempty"`
	Provider  string          `json:"provider,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  bool            `json:"redacted,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	MIME      string          `json:"mime,omitempty"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	ArgsError string          `json:"args_error,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   []block         `json:"content,omitempty"`
	Model     string          `json:"model,omitempty"`
	Prefix    string          `json:"prefix,omitempty"`
}

func encodeBlocks(bs []llm.Block) ([]block, error) {
	out := make([]block, 0, len(bs))
	for _, b := range bs {
		switch x := b.(type) {
		case *llm.TextBlock:
			out = append(out, block{Type: "text", Text: x.Text, Phase: x.Phase})
		case *llm.ThinkingBlock:
			out = append(out, block{Type: "thinking", Provider: x.Provider, Text: x.Text, Raw: x.Raw, Signature: x.Signature, Redacted: x.Redacted, Data: x.Data, ID: x.ID, Model: x.Model, Prefix: x.Prefix})
		case *llm.ImageBlock:
			out = append(out, block{Type: "image", MIME: x.MIME, Data: base64.StdEncoding.EncodeToString(x.Data)})
		case *llm.ToolCallBlock:
			out = append(out, block{Type: "tool_call", ID: x.ID, Name: x.Name, Args: x.Args, ArgsError: x.ArgsError, Signature: x.Signature, Cut: x.Cut})
		case *llm.ToolResultBlock:
			inner, err := encodeBlocks(x.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, block{Type: "tool_result", CallID: x.CallID, Name: x.Name, IsError: x.IsError, Content: inner})
		default:
			return nil, fmt.Errorf("cannot store a block of type %T", b)
		}
	}
	return out, nil
}

func decodeBlocks(bs []block) ([]llm.Block, error) {
	out := make([]llm.Block, 0, len(bs))
	for _, b := range bs {
		switch b.Type {
		case "text":
			out = append(out, &llm.TextBlock{Text: b.Text, Phase: b.Phase})
		case "thinking":
			out = append(out, &llm.ThinkingBlock{Provider: b.Provider, Text: b.Text, Raw: b.Raw, Signature: b.Signature, Redacted: b.Redacted, Data: b.Data, ID: b.ID, Model: b.Model, Prefix: b.Prefix})
		case "image":
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				return nil, fmt.Errorf("image data: %w", err)
			}
			out = append(out, &llm.ImageBlock{MIME: b.MIME, Data: data})
		case "tool_call":
			out = append(out, &llm.ToolCallBlock{ID: b.ID, Name: b.Name, Args: b.Args, ArgsError: b.ArgsError, Signature: b.Signature, Cut: b.Cut})
		case "tool_result":
			inner, err := decodeBlocks(b.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, &llm.ToolResultBlock{CallID: b.CallID, Name: b.Name, IsError: b.IsError, Content: inner})
		default:
			return nil, fmt.Errorf("unknown block type %q", b.Type)
		}
	}
	return out, nil
}

func encodeMessage(m llm.Message) ([]byte, error) {
	content, err := encodeBlocks(m.Content)
	if err != nil {
		return nil, err
	}
	// A long text (a huge prompt, a tool's big output) is not encoded by
	// json.Marshal, whose buffer grows by doubling and is copied out:
	// the record is marshalled with a short stand-in for it, and the text
	// is written in its place, into a line made at its final size.
	var long []string
	nonce := rand.Uint64()
	for i := range content {
		if len(content[i].Text) >= longText {
			long = append(long, content[i].Text)
			content[i].Text = standIn(nonce, len(long)-1)
		}
	}
	line, err := json.Marshal(record{Role: string(m.Role), Time: m.Time.UTC(), Meta: m.Meta, Content: content})
	if err != nil || len(long) == 0 {
		return line, err
	}
	n := len(line)
	for _, t := range long {
		n += wirecodec.StringLen(t)
	}
	out := make([]byte, 0, n+1) // +1: room for the line's newline
	rest := line
	for i, t := range long {
		mark, _ := json.Marshal(standIn(nonce, i))
		at := bytes.Index(rest, mark)
		if at < 0 {
			return nil, fmt.Errorf("encoding a long text: its place was not found")
		}
		out = append(out, rest[:at]...)
		out = wirecodec.AppendString(out, t)
		rest = rest[at+len(mark):]
	}
	return append(out, rest...), nil
}

// longText is the length from which a text is spliced into its line
// rather than marshalled (see encodeMessage).
const longText = 64 << 10

// standIn is the place holder of long text i of one message: a string
// nothing else in the line holds, by its random nonce (and NULs, which
// encode as \u0000).
func standIn(nonce uint64, i int) string {
	return "\x00zot-long-text-" + strconv.FormatUint(nonce, 16) + "-" + strconv.Itoa(i) + "\x00"
}
