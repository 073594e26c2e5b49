package wire

import (
	"errors"
	"slices"
	"testing"
)

// TestReadCommandIsLenient: a command's unknown members are ignored (and
// named), null stands for absent, and what is left must match the schema.
func TestReadCommandIsLenient(t *testing.T) {
	cases := []struct {
		line    string
		want    string // the command as read, re-encoded
		unknown []string
	}{
		{`{"type":"ping","id":"1"}`, `{"type":"ping","id":"1"}`, nil},
		{`{"type":"ping","id":"6","extra":true}`, `{"type":"ping","id":"6"}`, []string{"extra"}},
		{`{"type":"prompt","message":"hi","images":null,"id":null}`, `{"type":"prompt","message":"hi"}`, nil},
		{`{"type":"prompt","message":"hi","images":[{"data":"eA==","mime_type":null,"note":1}],"v2":{"a":1}}`,
			`{"type":"prompt","message":"hi","images":[{"data":"eA=="}]}`, []string{"images[].note", "v2"}},
		// An unknown member never stands in for a known one, whatever
		// encoding/json's case-insensitive matching would make of it.
		{`{"type":"prompt","message":"hi","MESSAGE":"evil","Images":[{"data":"x"}]}`, `{"type":"prompt","message":"hi"}`, []string{"Images", "MESSAGE"}},
		{`{"type":"abort","all":null}`, `{"type":"abort"}`, nil},
		{`{"type":"hello","token":null,"protocol_version":7,"client":{"name":"x","future":[1]}}`, `{"type":"hello","protocol_version":7,"client":{"future":[1],"name":"x"}}`, nil},
		{`{"type":"hello","client":null}`, `{"type":"hello"}`, nil},
		{`{"type":"answer_permission","request_id":"perm-1","decision":"reject","reason":null,"scope":"dir"}`, `{"type":"answer_permission","request_id":"perm-1","decision":"reject"}`, []string{"scope"}},
		{`{"type":"set_model","model":"anything-at-all"}`, `{"type":"set_model","model":"anything-at-all"}`, nil},
	}
	for _, c := range cases {
		cmd, unknown, err := ReadCommand([]byte(c.line))
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if got := string(cmd.AppendJSON(nil)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, got, c.want)
		}
		if !slices.Equal(unknown, c.unknown) {
			t.Errorf("%s: unknown %q, want %q", c.line, unknown, c.unknown)
		}
	}
}

func TestReadCommandRefuses(t *testing.T) {
	var ve *ValidationError
	var ut *UnknownTypeError
	for line, want := range map[string]any{
		`{"type":"prompt","message":null}`: &ve,
		`{"type":"prompt"}`:                &ve,
		`{"type":"prompt","message":"x","images":[{"mime_type":"image/png"}]}`: &ve,
		`{"type":"abort","all":"yes"}`:                                         &ve,
		`{"type":"hello","protocol_version":0}`:                                &ve,
		`{"type":"answer_permission","request_id":"p","decision":"maybe"}`:     &ve,
		`{"type":"ping","id":{"n":1}}`:                                         &ve,
		`{"type":"launch"}`:                                                    &ut,
	} {
		_, _, err := ReadCommand([]byte(line))
		switch w := want.(type) {
		case **ValidationError:
			if !errors.As(err, w) {
				t.Errorf("%s: got %v, want a validation error", line, err)
			}
		case **UnknownTypeError:
			if !errors.As(err, w) {
				t.Errorf("%s: got %v, want an unknown type", line, err)
			}
		}
	}
}

// FuzzReadCommand: whatever ReadCommand accepts, the strict validator
// accepts once re-encoded, and ValidateCommand agrees on the raw line.
func FuzzReadCommand(f *testing.F) {
	for _, d := range schemaDefs(f) {
		for _, ex := range d.Examples {
			f.Add([]byte(ex))
		}
	}
	f.Add([]byte(`{"type":"prompt","message":"x","Message":"y","images":[{"data":"eA==","DATA":1}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		cmd, _, err := ReadCommand(line)
		if (err == nil) != (ValidateCommand(line) == nil) {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadCommand says %v, ValidateCommand says %v: %s", err, ValidateCommand(line), line)
			}
		}
		if err != nil {
			return
		}
		again := cmd.AppendJSON(nil)
		if err := ValidateCommand(again); err != nil {
			t.Fatalf("%s read as %s, which does not validate: %v", line, again, err)
		}
	})
}
