package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"zot.dev/zot/schema"
)

// The daemon speaks the Agent Client Protocol (schema/acp/schema.json,
// vendored unchanged) plus zot's own methods and errors
// (schema/daemon/daemon.json). These checks read which definition each
// method's params and result have from the schema files' x-method and
// x-side, not from the Go code generated from them.

// rpcMethod is the params and result definitions of one method, with
// the schema file that has them.
type rpcMethod struct {
	file           string
	params, result string
}

// acpMethods reads the methods of both files.
var acpMethods = sync.OnceValues(func() (map[string]rpcMethod, error) {
	out := map[string]rpcMethod{}
	for _, file := range []string{"acp/schema.json", "daemon/daemon.json"} {
		data, err := schema.FS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Defs map[string]struct {
				Method string `json:"x-method"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", file, err)
		}
		for name, d := range doc.Defs {
			if d.Method == "" {
				continue
			}
			m := out[d.Method]
			m.file = file
			if strings.HasSuffix(name, "Response") {
				m.result = name
			} else {
				m.params = name
			}
			out[d.Method] = m
		}
	}
	return out, nil
})

// ValidateRPCDef checks data against definition def of file, a schema
// file of package schema ("acp/schema.json", "daemon/daemon.json").
func ValidateRPCDef(file, def string, data []byte) error {
	s, err := compile(file+"#"+def, schema.BaseURL+file+"#/$defs/"+def)
	if err != nil {
		return err
	}
	return validate(s, def, data)
}

// ACPConversation checks every JSON-RPC frame one connection carried,
// both ways, against the ACP schema and the daemon's: the params of each
// request and notification by its method, each result by the method of
// the request it answers (ids are matched per direction), each error
// against ACP's Error with zot's ErrorData as its data. Feed it the
// frames in the order they crossed, with fromClient saying the
// direction; Err returns every problem found.
type ACPConversation struct {
	mu       sync.Mutex
	pending  [2]map[string]string // by direction of the request: id → method
	problems []string
	frames   int
}

// Frame checks one frame. fromClient says the client sent it.
func (c *ACPConversation) Frame(fromClient bool, line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames++
	if err := c.frame(fromClient, line); err != nil {
		dir := "agent→client"
		if fromClient {
			dir = "client→agent"
		}
		c.problems = append(c.problems, fmt.Sprintf("%s %s: %v", dir, bytes.TrimSpace(line), err))
	}
}

// Skip records a frame without checking it: a test's deliberately bad
// request, whose answer is still checked.
func (c *ACPConversation) Skip(fromClient bool, line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(line, &f) != nil || f.Method == nil || f.ID == nil {
		return
	}
	dir := 0
	if fromClient {
		dir = 1
	}
	if c.pending[0] == nil {
		c.pending = [2]map[string]string{{}, {}}
	}
	c.pending[dir][string(f.ID)] = *f.Method
}

// Frames returns how many frames were checked.
func (c *ACPConversation) Frames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames
}

// Err returns the problems found so far, or nil.
func (c *ACPConversation) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.problems) == 0 {
		return nil
	}
	return fmt.Errorf("%d frames break the schema:\n%s", len(c.problems), strings.Join(c.problems, "\n"))
}

func (c *ACPConversation) frame(fromClient bool, line []byte) error {
	methods, err := acpMethods()
	if err != nil {
		return err
	}
	var f struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &f); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if f.JSONRPC != "2.0" {
		return fmt.Errorf(`jsonrpc is %q, want "2.0"`, f.JSONRPC)
	}
	dir := 0
	if fromClient {
		dir = 1
	}
	if c.pending[0] == nil {
		c.pending = [2]map[string]string{{}, {}}
	}
	if f.Method != nil {
		method := *f.Method
		if f.ID != nil {
			c.pending[dir][string(f.ID)] = method
		}
		m, ok := methods[method]
		if !ok || m.params == "" {
			if strings.HasPrefix(method, "_") || !fromClient {
				return fmt.Errorf("method %q is in no schema", method)
			}
			return nil // a client may send what the agent then refuses as unknown
		}
		params := f.Params
		if params == nil {
			params = []byte("{}")
		}
		return ValidateRPCDef(m.file, m.params, params)
	}
	// A response answers a request that went the other way.
	method, ok := c.pending[1-dir][string(f.ID)]
	if !ok {
		if f.Error != nil && string(f.ID) == "null" {
			return c.checkError(f.Error, !fromClient) // an answer to a line that had no id
		}
		return fmt.Errorf("answers id %s, which no request carried", f.ID)
	}
	delete(c.pending[1-dir], string(f.ID))
	switch {
	case f.Error != nil && f.Result != nil:
		return fmt.Errorf("has both result and error")
	case f.Error != nil:
		return c.checkError(f.Error, !fromClient)
	case f.Result == nil:
		return fmt.Errorf("has neither result nor error")
	}
	m := methods[method]
	if m.result == "" {
		return nil // the client's answer to a method no schema has
	}
	return ValidateRPCDef(m.file, m.result, f.Result)
}

// checkError checks an error object: ACP's Error, with zot's ErrorData
// when the agent sent it (fromAgent).
func (c *ACPConversation) checkError(raw json.RawMessage, fromAgent bool) error {
	if err := ValidateRPCDef("acp/schema.json", "Error", raw); err != nil || !fromAgent {
		return err
	}
	var e struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(raw, &e)
	if e.Data == nil {
		return fmt.Errorf("error without data (every error of the daemon has data.kind and data.retryable)")
	}
	return ValidateRPCDef("daemon/daemon.json", "ErrorData", e.Data)
}
