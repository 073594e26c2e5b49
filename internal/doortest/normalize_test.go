package doortest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// normalizer makes a transcript's frames the same on every run: the
// session's directory becomes $DIR, each session id $SID, $SID2, … in the
// order they first appear, and the values of volatile fields (clock
// times, durations) their field's name in angle brackets. Objects are
// written with sorted keys.
type normalizer struct {
	dir  string
	sids []string // actual session ids, $SID first
}

func newNormalizer(dir string) *normalizer { return &normalizer{dir: dir} }

// volatile are the fields whose values change from run to run.
var volatile = map[string]bool{
	"time":        true,
	"timestamp":   true,
	"updatedAt":   true,
	"createdAt":   true,
	"started_at":  true,
	"duration_ms": true,
	"elapsed_ms":  true,
	"uptime_ms":   true,
	"pid":         true,
}

// sidName is the placeholder of the i-th session id.
func sidName(i int) string {
	if i == 0 {
		return "$SID"
	}
	return fmt.Sprintf("$SID%d", i+1)
}

// value decodes a frame and normalises it.
func (n *normalizer) value(frame []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	n.learn(v)
	return n.walk(v), nil
}

// line renders a frame normalised, or as it is when it is not JSON.
func (n *normalizer) line(frame []byte) string {
	v, err := n.value(frame)
	if err != nil {
		return string(frame)
	}
	return encode(v)
}

// learn records the session ids a frame names.
func (n *normalizer) learn(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "sessionId" && s != "" && !strings.HasPrefix(s, "$") {
				known := false
				for _, id := range n.sids {
					known = known || id == s
				}
				if !known {
					n.sids = append(n.sids, s)
				}
			}
			n.learn(e)
		}
	case []any:
		for _, e := range v {
			n.learn(e)
		}
	}
}

func (n *normalizer) walk(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if volatile[k] && e != nil {
				v[k] = "<" + k + ">"
				continue
			}
			v[k] = n.walk(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = n.walk(e)
		}
		return v
	case string:
		return n.text(v)
	}
	return v
}

// text replaces the directory and the session ids in s.
func (n *normalizer) text(s string) string {
	if n.dir != "" {
		s = strings.ReplaceAll(s, n.dir, "$DIR")
	}
	for i, id := range n.sids {
		s = strings.ReplaceAll(s, id, sidName(i))
	}
	return s
}

// expand turns a step's frame into the frame to send: $DIR and the
// session ids back to their values, $REQ to the id of the last request
// the door sent the client.
func (n *normalizer) expand(s string, lastReq map[string]any) string {
	if lastReq != nil {
		s = strings.ReplaceAll(s, "$REQ", encode(lastReq["id"]))
	}
	// The longest placeholders first: $SID2 before $SID.
	for i := len(n.sids) - 1; i >= 0; i-- {
		s = strings.ReplaceAll(s, sidName(i), n.sids[i])
	}
	return strings.ReplaceAll(s, "$DIR", n.dir)
}
