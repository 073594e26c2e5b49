package tap

import (
	"bytes"
	"encoding/json"
	"regexp"
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
// or a bearer token inside any other string too. Data that is not JSON
// is redacted as text and returned as a JSON string.
func RedactJSON(data []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b, _ := json.Marshal(RedactText(string(data)))
		return b
	}
	v = redactValue("", v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b, _ := json.Marshal(Redacted)
		return b
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func redactValue(name string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactValue(k, e)
		}
		// A header list as {"name": "Authorization", "value": "…"}.
		if n, ok := x["name"].(string); ok && secretName(n) {
			if _, ok := x["value"].(string); ok {
				x["value"] = Redacted
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = redactValue(name, e)
		}
		return x
	case string:
		if secretName(name) && x != "" {
			return Redacted
		}
		return RedactText(x)
	}
	return v
}

// secretNames are member names (lower case, without - and _) whose
// string values are secrets.
var secretNames = map[string]bool{
	"key": true, "apikey": true, "xapikey": true, "xgoogapikey": true, "token": true, "accesstoken": true,
	"refreshtoken": true, "idtoken": true, "authtoken": true, "bearer": true, "secret": true,
	"clientsecret": true, "password": true, "passwd": true, "authorization": true,
	"proxyauthorization": true, "cookie": true, "setcookie": true, "sig": true, "signature": true,
	"credential": true, "credentials": true, "privatekey": true, "sessiontoken": true,
}

// secretName says whether a member, header or parameter of that name
// holds a secret.
func secretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
	if secretNames[n] {
		return true
	}
	return strings.HasSuffix(n, "apikey") || strings.HasSuffix(n, "secret") || strings.HasSuffix(n, "password") ||
		(strings.HasSuffix(n, "token") && !strings.HasSuffix(n, "maxtoken"))
}

// secretText finds secrets inside text: an Authorization header's value,
// a bearer token, NAME=value for a secret-looking variable, and the
// shapes of the vendors' API keys.
var secretText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(authorization\s*[:=]\s*)("?)(?:bearer\s+|basic\s+)?[^\s",]+` +
		`|(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}` +
		`|(\b[A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD)\s*[=:]\s*)("?)[^\s",]+` +
		`|\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{12,}|AIza[0-9A-Za-z_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})`)
})

// RedactText replaces the secrets found in free text.
func RedactText(s string) string {
	if s == "" {
		return s
	}
	re := secretText()
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
