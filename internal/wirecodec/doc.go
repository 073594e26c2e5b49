// Package wirecodec is the code every generated protocol package shares
// (sdk/wire and whichever packages zot-gen's targets add): it writes JSON
// exactly as encoding/json does, on one line; finds a message's `type`
// with one scan; reports decode errors on one line; and holds the checks
// the generated validators call.
//
// The protocol packages re-export what their users see ([DecodeError],
// [UnknownTypeError]) as aliases.
package wirecodec
