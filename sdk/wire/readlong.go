package wire

import (
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// decodeCommand decodes the command typ from data, the line its tree was
// decoded from. Its long string values (longs, from the tree) are not
// decoded a second time: encoding/json would decode each escaped one into
// a byte slice and copy that into the string, twice the text's size more
// on top of the tree's own copy. The line is decoded with each long
// literal replaced by a short stand-in that no text sent can hold (it
// names a number drawn for this call), and each string field the
// command then holds a stand-in in gets the tree's string (a copy of it
// when it shares the line's bytes). When that does not account for every
// stand-in exactly once (a long string inside a raw JSON member, or given
// twice under one name), or encoding/json refuses the shortened line,
// the line is decoded as it is, so the command is always what
// json.Unmarshal makes of the line.
func decodeCommand(typ string, data []byte, longs []longString) (Command, error) {
	if len(longs) > 0 {
		if cmd, ok := decodeWithStandIns(typ, data, longs); ok {
			return cmd, nil
		}
	}
	cmd := NewCommand(typ)
	if err := json.Unmarshal(data, cmd); err != nil {
		return nil, decodeError(typ, err)
	}
	return cmd, nil
}

// standInPrefix starts every stand-in; a NUL keeps it apart from text.
const standInPrefix = "\x00zot-long-string:"

// decodeWithStandIns is decodeCommand's way round the long strings; it
// reports false when the command must be decoded from the line as it is.
func decodeWithStandIns(typ string, data []byte, longs []longString) (Command, bool) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, false
	}
	prefix := standInPrefix + hex.EncodeToString(nonce[:]) + ":"
	short := make([]byte, 0, len(data)/16+len(longs)*64)
	prev := 0
	for i, l := range longs {
		short = append(short, data[prev:l.start]...)
		short = append(short, `"\u0000`...)
		short = append(short, prefix[1:]...)
		short = strconv.AppendInt(short, int64(i), 10)
		short = append(short, '"')
		prev = l.end
	}
	short = append(short, data[prev:]...)
	cmd := NewCommand(typ)
	if json.Unmarshal(short, cmd) != nil {
		return nil, false
	}
	found := make([]int, len(longs))
	ok := true
	eachString(reflect.ValueOf(cmd), func(v reflect.Value) {
		s := v.String()
		if !strings.HasPrefix(s, prefix) {
			return
		}
		i, err := strconv.Atoi(s[len(prefix):])
		if err != nil || i < 0 || i >= len(longs) {
			ok = false
			return
		}
		found[i]++
		text := longs[i].s
		if longs[i].shared {
			text = strings.Clone(text)
		}
		v.SetString(text)
	})
	for _, n := range found {
		ok = ok && n == 1
	}
	return cmd, ok
}

// Decoders of their own may do anything with a string, so eachString does
// not look into values of types that have one.
var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// eachString calls fn with every settable string (of any string type) that
// v holds in exported struct fields, pointers, interfaces, slices and
// arrays. Byte slices (raw JSON), maps and values whose type decodes
// itself are not entered: a stand-in there is not found, and the caller
// decodes the line as it is.
func eachString(v reflect.Value, fn func(reflect.Value)) {
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.CanAddr() {
		if t := v.Addr().Type(); t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) {
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			eachString(v.Elem(), fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachString(v.Field(i), fn)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			eachString(v.Index(i), fn)
		}
	case reflect.String:
		if v.CanSet() {
			fn(v)
		}
	}
}
