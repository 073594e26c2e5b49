package exthost

import (
	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/sdk/extwire"
)

// decodeFrame decodes one frame an extension wrote. tool_result, the
// answer on the path of every tool call, is read by scanToolResult, in
// one pass without reflection, when it is written the plain way (the
// generated decoder reads a content list element by element, scanning
// each twice). Everything else, and a tool_result written otherwise, goes
// to the generated decoder, which has the last word on what is valid.
func decodeFrame(line []byte) (extwire.ExtensionFrame, error) {
	if typ, err := wirecodec.PeekType(line); err == nil && typ == extwire.TypeToolResultFrame {
		if f, ok := scanToolResult(line); ok {
			return f, nil
		}
	}
	return extwire.DecodeExtensionFrame(line)
}
