// Package mergepatch applies JSON merge patches (RFC 7396).
package mergepatch

import (
	"encoding/json"
	"fmt"
)

// Apply returns target with patch merged into it as RFC 7396 says: an
// object patch sets its members on the target (an object target, else an
// empty one), a null member removes the target's, an object member is
// merged in turn; any other patch replaces the target whole.
func Apply(target, patch json.RawMessage) (json.RawMessage, error) {
	var t, p any
	if len(target) > 0 {
		if err := json.Unmarshal(target, &t); err != nil {
			return nil, fmt.Errorf("mergepatch: target: %w", err)
		}
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("mergepatch: patch: %w", err)
	}
	out, err := json.Marshal(merge(t, p))
	if err != nil {
		return nil, fmt.Errorf("mergepatch: %w", err)
	}
	return out, nil
}

// merge is the MergePatch function of RFC 7396, section 2.
func merge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = merge(t[k], v)
	}
	return t
}
