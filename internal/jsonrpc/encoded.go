package jsonrpc

// Encoded is a payload (Notify's or Call's params, a Result's value) its
// maker already encoded as compact, valid JSON: it goes on the wire as is,
// without the check and compaction a json.RawMessage gets. It is for
// frames a server sends by the thousand (text chunks of an answer) and
// encodes itself; bytes that are not compact valid JSON break the stream.
type Encoded []byte
