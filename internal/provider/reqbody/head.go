package reqbody

import "sync"

// HeadCache holds the encoding of the last request head: the members of
// a body before its messages and tools (model, limits, thinking, the
// system prompt). A session sends the same head on every call, and its
// system prompt is kilobytes of text to escape. K holds what the head is
// made of besides the system prompt; it is compared with ==, and so is
// the system prompt (the same string of the last call costs no compare
// of its bytes). It is safe for concurrent use. The zero value is ready.
type HeadCache[K comparable] struct {
	mu     sync.Mutex
	valid  bool
	key    K
	system string
	head   []byte
}

// Get returns the head for key and system, calling encode only when
// either differs from the last call's. A nil c calls encode every time.
// The returned bytes are shared with the cache and must not be modified.
func (c *HeadCache[K]) Get(key K, system string, encode func() ([]byte, error)) ([]byte, error) {
	if c == nil {
		return encode()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.valid && c.key == key && c.system == system {
		return c.head, nil
	}
	head, err := encode()
	if err != nil {
		return nil, err
	}
	c.valid, c.key, c.system, c.head = true, key, system, head
	return head, nil
}
