package wirecodec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

func TestFloatsMatchEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, 0.0123, 1e-7, 123456789, 1e21, 3.75, -2.5e-9} {
		std, _ := json.Marshal(f)
		if got := AppendFloat(nil, f); !bytes.Equal(got, std) {
			t.Errorf("%v: got %s, want %s", f, got, std)
		}
	}
}

func TestStringsMatchEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "<a&b>", "\u2028\u2029", "\x00\x1f\t\n\r", "\xff", "é 日本"} {
		std, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, std) {
			t.Errorf("%q: got %s, want %s", s, got, std)
		}
	}
}

func TestLocRendersAsJSONPointer(t *testing.T) {
	var root *Loc
	at := &Loc{Parent: &Loc{Parent: root, Key: "images"}, Index: 0, IsIndex: true}
	if got := (&Loc{Parent: at, Key: "data"}).String(); got != "/images/0/data" {
		t.Errorf("got %q", got)
	}
	if got := root.String(); got != "/" {
		t.Errorf("root: got %q", got)
	}
}

// FuzzStringLen: StringLen is the length AppendString writes.
func FuzzStringLen(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>\"\\\n\r\t\x01", "\u2028\u2029é😀", "\xff\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := StringLen(s), len(AppendString(nil, s)); got != want {
			t.Fatalf("StringLen(%q) = %d, AppendString writes %d", s, got, want)
		}
	})
}

// FuzzAppendString: AppendString writes what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a&b>\"\\\n\r\t\x01\x7f", "\u2028\u2029é😀", "\xff\xed\xa0\x80", "d00000000000042 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		std, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); !bytes.Equal(got, std) {
			t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got, std)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	for _, s := range []string{"d00000000000042 ", "20261123T000000Z-0123456789abcdef-session", "The model's answer, a sentence of ordinary prose with \"quotes\" & <tags>.\n"} {
		b.Run(strconv.Itoa(len(s)), func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				buf = AppendString(buf[:0], s)
			}
		})
	}
}
