//go:build !linux

package tools

import "path/filepath"

// writeBeneath puts data in the file rel beneath root. Systems other than
// Linux have no sandbox that confines writes (docs/sandbox.md): the path
// is written as writeFile writes any.
func writeBeneath(root, rel string, data []byte, _ bool) (writeOutcome, error) {
	return writeFile(filepath.Join(root, rel), data)
}
