// Package wire holds the types of zot's `zot rpc` protocol, generated from
// the JSON Schema in schema/rpc/: every command, response payload, event,
// content block, message and error code.
//
// The server, the Go SDK and embedders that parse `zot rpc` output use these
// same types, so a value the SDK hands out marshals to exactly the line the
// server prints. Unions (Command, Event, ContentBlock) are sealed interfaces
// implemented by pointers to their variants; [DecodeCommand], [DecodeEvent]
// and [DecodeContentBlock] pick the variant by its `type` field, and every
// variant's MarshalJSON and AppendJSON write the right `type`.
//
// Decoding does not validate: [ValidateCommand], [ValidateEvent],
// [ValidateResponse] and [ValidateFrame] check a message against its own
// variant's schema and return a one-line error.
package wire

//go:generate go run ../../gen/cmd/zot-gen -root ../..
