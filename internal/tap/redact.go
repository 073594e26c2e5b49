package tap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Redacted replaces a secret in an export.
const Redacted = "[redacted]"

// ExportVersion is the version of the export's format (Export.Format).
const ExportVersion = 1

// Export is a session's traffic as a file: what the inspector page
// downloads and imports for offline viewing. Its frames, URLs and errors
// have their secrets redacted.
type Export struct {
	Format      string         `json:"format"`
	Version     int            `json:"version"`
	ExportedAt  time.Time      `json:"exported_at"`
	Session     *string        `json:"session,omitempty"`
	Redacted    bool           `json:"redacted"`
	Records     []*Record      `json:"records"`
	Sessions    []SessionInfo  `json:"sessions"`
	Connections []ConnInfo     `json:"connections"`
	Limits      SnapshotLimits `json:"limits"`
}

// ExportFormat names the export's format.
const ExportFormat = "zot-inspect"

// Export returns session's records (every session's when all), each
// with its secrets redacted, as a file to save.
func (t *Tap) Export(session string, all bool) Export {
	snap := t.Snapshot(session, all)
	out := Export{Format: ExportFormat, Version: ExportVersion, ExportedAt: time.Now().UTC(), Redacted: true,
		Sessions: snap.Sessions, Connections: snap.Connections, Limits: snap.Limits}
	if !all {
		out.Session = &session
	}
	out.Records = make([]*Record, 0, len(snap.Records))
	for _, r := range snap.Records {
		out.Records = append(out.Records, RedactRecord(r))
	}
	return out
}

// RedactRecord returns a copy of r (checked) with the secrets of its
// frame, URL and error replaced.
func RedactRecord(r *Record) *Record {
	r.Checked()
	c := &Record{Seq: r.Seq, At: r.At, Kind: r.Kind, Door: r.Door, Conn: r.Conn, Session: r.Session, Dir: r.Dir,
		Size: r.Size, Method: r.Method, Role: r.Role, ID: r.ID, Update: r.Update, Pair: r.Pair, Ms: r.Ms,
		Valid: r.Valid, Problem: RedactText(r.Problem), Cut: r.Cut, URL: RedactText(r.URL), Status: r.Status, TTFB: r.TTFB,
		Events: r.Events, Outcome: r.Outcome, Error: RedactText(r.Error), Stop: r.Stop, TokIn: r.TokIn,
		TokOut: r.TokOut, Step: r.Step, ToolID: r.ToolID}
	c.checked.Do(func() {})
	if len(r.Frame) > 0 {
		c.Frame = RedactJSON(r.Frame)
	}
	return c
}

// RedactJSON returns the JSON value data with the string values of
// members named like secrets (api keys, tokens, secrets, passwords,
// Authorization and cookie headers) replaced, and what looks like a key
// or a bearer token inside any other string too. Members keep their
// order. Data that is not JSON is redacted as text and returned as a
// JSON string.
func RedactJSON(data []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err == nil {
		_, err = dec.Token()
		if err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("more than one value")
		}
	}
	if err != nil {
		b, _ := json.Marshal(RedactText(string(data)))
		return b
	}
	redactValue("", v)
	return v.appendJSON(nil)
}

// value is a JSON value that keeps its members' order.
type value struct {
	kind  byte // '{', '[', '"', or 0 for a number, true, false, null
	keys  []string
	elems []*value // members' values, or an array's elements
	str   string
	lit   string
}

func readValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		v := &value{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				v.keys = append(v.keys, key)
			}
			e, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, e)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	case string:
		return &value{kind: '"', str: t}, nil
	case json.Number:
		return &value{lit: t.String()}, nil
	case bool:
		return &value{lit: strconv.FormatBool(t)}, nil
	case nil:
		return &value{lit: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func (v *value) appendJSON(b []byte) []byte {
	switch v.kind {
	case '{':
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = v.elems[i].appendJSON(b)
		}
		return append(b, '}')
	case '[':
		b = append(b, '[')
		for i, e := range v.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b)
		}
		return append(b, ']')
	case '"':
		return appendString(b, v.str)
	}
	return append(b, v.lit...)
}

func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// redactValue replaces the secrets in v, the value of a member named
// name.
func redactValue(name string, v *value) {
	switch v.kind {
	case '{':
		for i, k := range v.keys {
			redactValue(k, v.elems[i])
		}
		// A header as {"name": "Authorization", "value": "…"}.
		var n, val *value
		for i, k := range v.keys {
			switch k {
			case "name":
				n = v.elems[i]
			case "value":
				val = v.elems[i]
			}
		}
		if n != nil && val != nil && n.kind == '"' && val.kind == '"' && secretName(n.str) {
			val.str = Redacted
		}
	case '[':
		for _, e := range v.elems {
			redactValue(name, e)
		}
	case '"':
		if secretName(name) && v.str != "" {
			v.str = Redacted
			return
		}
		v.str = RedactText(v.str)
	}
}

// secretName says whether a member, header or parameter of that name
// holds a secret.
func secretName(name string) bool {
	n := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(name, "-", ""), "_", ""))
	switch n {
	case "key", "apikey", "xapikey", "xgoogapikey", "token", "accesstoken", "refreshtoken", "idtoken",
		"authtoken", "bearer", "secret", "clientsecret", "password", "passwd", "authorization",
		"proxyauthorization", "cookie", "setcookie", "sig", "signature", "credential", "credentials",
		"privatekey", "sessiontoken":
		return true
	}
	return strings.HasSuffix(n, "apikey") || strings.HasSuffix(n, "secret") || strings.HasSuffix(n, "password") ||
		(strings.HasSuffix(n, "token") && !strings.HasSuffix(n, "maxtoken"))
}

// secretText finds secrets inside text: an Authorization header's value,
// a bearer token, NAME=value for a secret-looking variable, and the
// shapes of the vendors' API keys.
var secretText struct {
	once sync.Once
	re   *regexp.Regexp
}

// secretRE compiles secretText's expression at its first use.
func secretRE() *regexp.Regexp {
	secretText.once.Do(func() {
		secretText.re = regexp.MustCompile(`(?i)(authorization\s*[:=]\s*)("?)(?:bearer\s+|basic\s+)?[^\s",]+` +
			`|(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}` +
			`|(\b[A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD)\s*[=:]\s*)("?)[^\s",]+` +
			`|\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{12,}|AIza[0-9A-Za-z_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})`)
	})
	return secretText.re
}

// RedactText replaces the secrets found in free text.
func RedactText(s string) string {
	if s == "" {
		return s
	}
	re := secretRE()
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			return sub[1] + sub[2] + Redacted
		case sub[3] != "":
			return sub[3] + Redacted
		case sub[4] != "":
			return sub[4] + sub[5] + Redacted
		}
		return Redacted
	})
}
