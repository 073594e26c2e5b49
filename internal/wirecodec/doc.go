// Package wirecodec is the code every generated protocol package shares
// (sdk/wire and whichever packages zot-gen's targets add): it writes JSON
// exactly as encoding/json does, on one line; finds a message's `type`
// with one scan; reports decode errors on one line; holds the checks
// the generated validators call; and runs them ([Validators]: a message
// by definition name or by its union's `type`).
//
// The protocol packages re-export what their users see ([DecodeError],
// [UnknownTypeError], [ValidationError]) as aliases, and the generator
// writes each package's ValidateDef over its [Validators]; a package
// keeps by hand only what differs (sdk/wire's rules for a response).
package wirecodec
