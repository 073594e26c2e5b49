package wire

import (
	"encoding/json"

	"zot.dev/zot/internal/wirecodec"
)

// DecodeFrame decodes one line the server wrote: exactly one of resp and
// ev is non-nil on success.
func DecodeFrame(data []byte) (resp *Response, ev Event, err error) {
	typ, err := wirecodec.PeekType(data)
	if err != nil {
		return nil, nil, err
	}
	if typ == TypeResponse {
		resp = new(Response)
		if err := json.Unmarshal(data, resp); err != nil {
			return nil, nil, decodeError(typ, err)
		}
		return resp, nil, nil
	}
	ev, err = DecodeEvent(data)
	return nil, ev, err
}

// Result decodes the response's data into the result type of its command
// (e.g. *StateResult for get_state). It returns nil, nil for a failed
// response or a command without a result.
func (r *Response) Result() (any, error) {
	if !r.Success || len(r.Data) == 0 {
		return nil, nil
	}
	v := NewResult(r.Command)
	if v == nil {
		return nil, nil
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return nil, decodeError(r.Command, err)
	}
	return v, nil
}
