package rpcclient

import (
	"encoding/json"

	"zot.dev/zot/sdk/wire"
)

// RawEvent is an event this client could not decode into its wire type:
// a type it does not know, or fields that do not fit, as a newer server may
// send. It is delivered in order with the others, carrying the line as it
// came, so nothing the server says is lost.
type RawEvent struct {
	// wire.Event is left nil; it only makes RawEvent a wire.Event. Every
	// method of the interface is defined on *RawEvent itself.
	wire.Event

	// Name is the event's `type`.
	Name string
	// Seq is the event's `seq`, when it could be read.
	Seq int64
	// PromptID is the event's `prompt_id`, when it could be read.
	PromptID wire.ID
	// JSON is the whole line, without its newline.
	JSON json.RawMessage
	// Err says why it was not decoded: a *wire.UnknownTypeError for a type
	// this client does not know, else the decoding error.
	Err error
}

// rawHeader is what every event carries.
type rawHeader struct {
	Seq      int64   `json:"seq"`
	PromptID wire.ID `json:"prompt_id"`
}

// newRawEvent keeps line as an event of type name that failed to decode
// with err. It returns nil when the line is not even a JSON object.
func newRawEvent(name string, line []byte, err error) *RawEvent {
	if !json.Valid(line) {
		return nil
	}
	// A field of the wrong type is skipped; the others are still read.
	var h rawHeader
	_ = json.Unmarshal(line, &h)
	return &RawEvent{Name: name, Seq: h.Seq, PromptID: h.PromptID, JSON: append(json.RawMessage(nil), line...), Err: err}
}

// Type returns the event's `type`.
func (e *RawEvent) Type() string { return e.Name }

// AppendJSON appends the line as it came.
func (e *RawEvent) AppendJSON(b []byte) []byte { return append(b, e.JSON...) }

// MarshalJSON returns the line as it came.
func (e *RawEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// GetSeq returns the event's `seq`.
func (e *RawEvent) GetSeq() int64 { return e.Seq }

// SetSeq sets Seq; JSON is left as it came.
func (e *RawEvent) SetSeq(x int64) { e.Seq = x }

// GetPromptID returns the event's `prompt_id`.
func (e *RawEvent) GetPromptID() wire.ID { return e.PromptID }

// SetPromptID sets PromptID; JSON is left as it came.
func (e *RawEvent) SetPromptID(x wire.ID) { e.PromptID = x }
