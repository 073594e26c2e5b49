package exthost

import (
	"zot.dev/zot/internal/jsonscan"
	"zot.dev/zot/sdk/extwire"
)

// scanToolResult reads a tool_result written the plain way, without
// reflection: an object of type, id, content and is_error, each at most
// once, spelled as the schema spells them; content a list of text blocks
// {type, text} and image blocks {type, mime_type, data}; strings valid
// UTF-8 with at most the usual escapes; is_error true or false. It
// reports false for anything else (another member, a duplicate, null, a
// number, a lone surrogate, …), which the general readers then decide.
func scanToolResult(line []byte) (*extwire.ToolResultFrame, bool) {
	s := scanner{b: line}
	if !s.lit('{') {
		return nil, false
	}
	f := &extwire.ToolResultFrame{}
	var seenType, seenID, seenContent, seenError bool
	for more := !s.lit('}'); more; {
		key, ok := s.key()
		if !ok || !s.lit(':') {
			return nil, false
		}
		switch string(key) {
		case "type":
			t, ok := s.str()
			if !ok || seenType || t != extwire.TypeToolResultFrame {
				return nil, false
			}
			seenType = true
		case "id":
			id, ok := s.str()
			if !ok || seenID {
				return nil, false
			}
			f.ID, seenID = id, true
		case "content":
			if seenContent {
				return nil, false
			}
			list, ok := s.contents()
			if !ok {
				return nil, false
			}
			f.Content, seenContent = list, true
		case "is_error":
			b, ok := s.boolean()
			if !ok || seenError {
				return nil, false
			}
			f.IsError, seenError = &b, true
		default:
			return nil, false
		}
		if more, ok = s.next('}'); !ok {
			return nil, false
		}
	}
	s.ws()
	if !seenType || !seenID || s.i != len(s.b) {
		return nil, false
	}
	return f, true
}

// scanner walks JSON text for scanToolResult.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() { s.i = jsonscan.SkipSpace(s.b, s.i) }

// lit takes c, after white space, if it comes next.
func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// next takes what follows a member or an element: a comma (more comes)
// or end (the object or list is over).
func (s *scanner) next(end byte) (more, ok bool) {
	switch {
	case s.lit(','):
		return true, true
	case s.lit(end):
		return false, true
	}
	return false, false
}

// key reads a member name without escapes.
func (s *scanner) key() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	end, escaped := jsonscan.String(s.b, s.i)
	if end < 0 || escaped {
		return nil, false
	}
	k := s.b[s.i+1 : end-1]
	s.i = end
	return k, true
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	s.ws()
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// str reads a string.
func (s *scanner) str() (string, bool) {
	s.ws()
	v, end, ok := jsonscan.Unquote(s.b, s.i)
	if !ok {
		return "", false
	}
	s.i = end
	return v, true
}

// contents reads a list of text and image blocks.
func (s *scanner) contents() (extwire.ToolContents, bool) {
	if !s.lit('[') {
		return nil, false
	}
	list := extwire.ToolContents{}
	for more := !s.lit(']'); more; {
		c, ok := s.content()
		if !ok {
			return nil, false
		}
		list = append(list, c)
		if more, ok = s.next(']'); !ok {
			return nil, false
		}
	}
	return list, true
}

// content reads one block.
func (s *scanner) content() (extwire.ToolContent, bool) {
	if !s.lit('{') {
		return nil, false
	}
	var typ, text, mime, data string
	var seen [4]bool // type, text, mime_type, data
	for more := !s.lit('}'); more; {
		key, ok := s.key()
		if !ok || !s.lit(':') {
			return nil, false
		}
		var at int
		var dst *string
		switch string(key) {
		case "type":
			at, dst = 0, &typ
		case "text":
			at, dst = 1, &text
		case "mime_type":
			at, dst = 2, &mime
		case "data":
			at, dst = 3, &data
		default:
			return nil, false
		}
		v, ok := s.str()
		if !ok || seen[at] {
			return nil, false
		}
		*dst, seen[at] = v, true
		if more, ok = s.next('}'); !ok {
			return nil, false
		}
	}
	switch {
	case typ == extwire.TypeTextContent && seen[1] && !seen[2] && !seen[3]:
		return &extwire.TextContent{Text: text}, true
	case typ == extwire.TypeImageContent && seen[2] && seen[3] && !seen[1]:
		return &extwire.ImageContent{MIMEType: mime, Data: data}, true
	}
	return nil, false
}
