// Package doortest checks the engine's features through every door, in
// one process under the race detector: zot rpc (rpcserver over an
// in-memory pair), the Agent Client Protocol (acpserver over an in-memory
// pair) and the Go SDK (sdk.Runtime, called directly). Where a door's
// behaviour is a sequence of frames it is pinned by a golden transcript:
// testdata/<door>/*.txt holds the provider's script, the client's steps
// and every frame both ways, volatile fields normalised; `go test
// -update` rewrites the frames. It holds tests only.
package doortest
