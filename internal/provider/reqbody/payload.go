package reqbody

import (
	"bytes"
	"io"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/wirecodec"
)

// LongText is the length of text from which a message made only of text
// is not encoded once and kept for the requests that follow (its fragment
// is [InPlace]): its texts are left out of the body's bytes and encoded
// only as the body is sent ([Payload]), so a long prompt is not held
// again, once or twice, per request.
const LongText = 1 << 20

// inPlace is the fragment of such a message: no encoding of values is one
// NUL byte.
var inPlace = []byte{0}

// InPlace returns the fragment to keep for a message whose texts are
// spliced into each body (see [LongText]).
func InPlace() []byte { return inPlace }

// IsInPlace reports whether f is [InPlace]'s fragment.
func IsInPlace(f []byte) bool { return len(f) == 1 && f[0] == 0 }

// LongTextOnly reports whether m holds only text blocks, [LongText] bytes
// of text or more in all.
func LongTextOnly(m *llm.Message) bool {
	n := 0
	for _, b := range m.Content {
		t, ok := b.(*llm.TextBlock)
		if !ok {
			return false
		}
		n += len(t.Text)
	}
	return n >= LongText
}

// Payload is a request body held as the bytes of its JSON with the long
// texts left out, and those texts, which are encoded as JSON strings only
// as the body is read. A long prompt then costs its text (which the
// transcript holds anyway) and no copy of its encoding per request.
type Payload struct {
	raw     []byte
	splices []splice // in order of at
	size    int64
	recycling
}

// splice is a text encoded as a JSON string at offset at of raw.
type splice struct {
	at   int
	text string
	n    int // wirecodec.StringLen(text)
}

// Splices collects, while a body is appended, the texts it leaves out.
type Splices struct {
	list []splice
}

// AppendText records that the JSON string of text goes at the end of b,
// and returns b unchanged: the text is encoded when the body is read.
func (s *Splices) AppendText(b []byte, text string) []byte {
	s.list = append(s.list, splice{at: len(b), text: text, n: wirecodec.StringLen(text)})
	return b
}

// AppendTextParts appends one JSON object per text block of m, a message
// of only text, comma-separated and skipping empty texts: head (the
// object up to its text member's value, `{"text":`), the text left to s,
// and the closing brace.
func (s *Splices) AppendTextParts(b []byte, m *llm.Message, head string) []byte {
	first := true
	for _, blk := range m.Content {
		t := blk.(*llm.TextBlock)
		if t.Text == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, head...)
		b = append(s.AppendText(b, t.Text), '}')
	}
	return b
}

// NewPayload returns the body raw with the texts of s put in at their
// places.
func NewPayload(raw []byte, s *Splices) *Payload {
	p := &Payload{raw: raw, size: int64(len(raw))}
	if s != nil {
		p.splices = s.list
		for _, sp := range s.list {
			p.size += int64(sp.n)
		}
	}
	return p
}

// Len returns the length of the body in bytes.
func (p *Payload) Len() int64 { return p.size }

// Reader returns a reader of the body from its start; each call gives a
// new one, so a retried request sends the body again.
func (p *Payload) Reader() io.Reader {
	var r io.Reader
	if len(p.splices) == 0 {
		r = bytes.NewReader(p.raw)
	} else {
		r = &payloadReader{p: p}
	}
	if p.bufs == nil {
		return r
	}
	p.refs.Add(1)
	return &closingReader{p: p, r: r}
}

// Bytes returns the whole body in one slice.
func (p *Payload) Bytes() []byte {
	if len(p.splices) == 0 {
		return p.raw
	}
	b := make([]byte, 0, p.size)
	prev := 0
	for _, sp := range p.splices {
		b = append(b, p.raw[prev:sp.at]...)
		b = wirecodec.AppendString(b, sp.text)
		prev = sp.at
	}
	return append(b, p.raw[prev:]...)
}

// textChunk is how many bytes of a text payloadReader encodes at a time.
var textChunk = 32 << 10

// payloadReader reads a Payload: raw up to the next splice, that splice's
// text encoded a chunk at a time, and so on.
type payloadReader struct {
	p       *Payload
	next    int    // the next splice
	rawAt   int    // what of raw is read
	text    string // the rest of the text being encoded
	inText  bool
	pending []byte // encoded and not yet read
	buf     []byte
}

func (r *payloadReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if len(r.pending) > 0 {
			c := copy(b[n:], r.pending)
			r.pending = r.pending[c:]
			n += c
			continue
		}
		if r.inText {
			r.pending = r.encodeNext()
			continue
		}
		end := len(r.p.raw)
		if r.next < len(r.p.splices) {
			end = r.p.splices[r.next].at
		}
		if r.rawAt < end {
			c := copy(b[n:], r.p.raw[r.rawAt:end])
			r.rawAt += c
			n += c
			continue
		}
		if r.next == len(r.p.splices) {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		r.text, r.inText = r.p.splices[r.next].text, true
		r.next++
		r.pending = append(r.buf[:0], '"')
	}
	return n, nil
}

// encodeNext encodes the next chunk of the text, ending it at the start
// of a UTF-8 sequence so no character is cut (the escapes of a JSON
// string are per character, so the chunks join into the text's
// encoding), and the closing quote once the text is used up.
func (r *payloadReader) encodeNext() []byte {
	if r.text == "" {
		r.inText = false
		return append(r.buf[:0], '"')
	}
	end := min(textChunk, len(r.text))
	for end < len(r.text) && end > 0 && !utf8.RuneStart(r.text[end]) {
		end--
	}
	if end == 0 {
		end = min(textChunk, len(r.text))
	}
	enc := wirecodec.AppendString(r.buf[:0], r.text[:end])
	r.buf = enc
	r.text = r.text[end:]
	return enc[1 : len(enc)-1]
}
