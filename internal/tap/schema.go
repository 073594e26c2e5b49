package tap

import (
	"encoding/json"
	"strings"
	"sync"

	"zot.dev/zot/internal/outputschema"
	"zot.dev/zot/schema"
	"zot.dev/zot/sdk/wire"
)

// checkRPCCommand checks a zot rpc command line against the schema.
func checkRPCCommand(r *Record) { verdict(r, wire.ValidateCommand(r.Frame)) }

// checkRPCFrame checks a zot rpc response or event against the schema.
func checkRPCFrame(r *Record) { verdict(r, wire.ValidateFrame(r.Frame)) }

func verdict(r *Record, err error) {
	if err != nil {
		r.Valid, r.Problem = "bad", err.Error()
		return
	}
	r.Valid = "ok"
}

// checkACP returns the check of an ACP message's params (a request or
// notification) or result (a response) against the definition the ACP
// schema (or zot's daemon schema, for _zot/ methods) gives for method's
// role; a method without one is left unchecked. The part checked is read
// from the record's own copy of the frame when the check runs.
func checkACP(method, role string) func(*Record) {
	if method == "" {
		return nil
	}
	return func(r *Record) {
		def, ok := acpSchemas().lookup(method, role)
		if !ok {
			return // no schema for this method: shown as unchecked
		}
		var p struct {
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Frame, &p); err != nil {
			return
		}
		body := p.Params
		if role == "response" {
			body = p.Result
		}
		if len(body) == 0 {
			body = json.RawMessage("null")
		}
		verdict(r, def.doc.CheckRef(def.def, body))
	}
}

// schemaSet holds ACP's schema and zot's daemon schema, each compiled
// once, and which definition checks each method's params or result.
type schemaSet struct {
	byMethod map[string]ref // method + "\x00" + kind
}

type ref struct {
	doc *outputschema.Schema
	def string // "#/$defs/Name"
}

var acpSet struct {
	once sync.Once
	set  *schemaSet
}

// acpSchemas reads and compiles the schemas at the first check.
func acpSchemas() *schemaSet {
	acpSet.once.Do(func() { acpSet.set = loadSchemas() })
	return acpSet.set
}

func loadSchemas() *schemaSet {
	s := &schemaSet{byMethod: map[string]ref{}}
	for _, doc := range []string{"acp/schema.json", "daemon/daemon.json"} {
		data, err := schema.FS.ReadFile(doc)
		if err != nil {
			continue
		}
		compiled, err := outputschema.Compile(data)
		if err != nil {
			continue
		}
		var d struct {
			Defs map[string]struct {
				Method string `json:"x-method"`
			} `json:"$defs"`
		}
		if json.Unmarshal(data, &d) != nil {
			continue
		}
		for name, def := range d.Defs {
			if def.Method == "" {
				continue
			}
			kind := "request"
			switch {
			case strings.HasSuffix(name, "Response"):
				kind = "response"
			case strings.HasSuffix(name, "Notification"):
				kind = "notification"
			case !strings.HasSuffix(name, "Request"):
				continue
			}
			s.byMethod[def.Method+"\x00"+kind] = ref{doc: compiled, def: "#/$defs/" + name}
		}
	}
	return s
}

// lookup returns the definition of method's role ("request",
// "notification", "response").
func (s *schemaSet) lookup(method, role string) (ref, bool) {
	r, ok := s.byMethod[method+"\x00"+role]
	if !ok && role == "request" {
		r, ok = s.byMethod[method+"\x00notification"]
	}
	if !ok && role == "notification" {
		r, ok = s.byMethod[method+"\x00request"]
	}
	return r, ok
}
