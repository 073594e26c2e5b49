// Package reqbody builds the JSON bodies of model requests without
// encoding again what the previous request of the session already sent.
//
// A session sends the same tool list on every call, and a transcript that
// grows by a message or two per step; encoding all of it for each request
// makes a long session's steps cost more and more, and the tool schemas
// are most of a short request's bytes. A provider keeps a [ToolCache] and
// a [MessageCache] for the life of its client and assembles each body
// ([Body]) from a head it encodes (model, limits, system prompt), the
// messages array ([AppendArray], [AppendGrouped]) and the tools.
package reqbody
