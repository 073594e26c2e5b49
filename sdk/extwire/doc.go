// Package extwire holds the types of zot's extension protocol,
// generated from the JSON Schema in schema/ext/: every frame an extension
// writes ([ExtensionFrame]), every frame zot writes to it ([HostFrame]),
// the content of tool results and the extension manifest ([Manifest]).
//
// zot's extension host reads and writes these types, and an extension
// written in Go can use the same ones, so both sides agree on the wire by
// construction. Unions are sealed interfaces implemented by pointers to
// their variants; [DecodeExtensionFrame] and [DecodeHostFrame] pick the
// variant by its `type` field, and every variant's AppendJSON writes the
// right `type`. Decoding ignores fields it does not know, so a newer peer
// can add some.
//
// Decoding does not validate: [ValidateExtensionFrame],
// [ValidateHostFrame] and [ValidateManifest] check a frame against its
// own variant's schema and return a one-line error.
package extwire

//go:generate go run ../../gen/cmd/zot-gen -root ../..
