package reqbody

import (
	"errors"
	"hash/maphash"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
)

// counter encodes a message as its text and counts the calls.
type counter struct {
	mu    sync.Mutex
	calls int
}

func (c *counter) encode(m *llm.Message) ([]byte, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return []byte(string(m.Role) + ":" + m.Text()), nil
}

func text(role llm.Role, s string) llm.Message {
	return llm.Message{Role: role, Content: []llm.Block{&llm.TextBlock{Text: s}}}
}

func encodeAll(t *testing.T, c *MessageCache, msgs []llm.Message, enc *counter) []string {
	t.Helper()
	out, err := c.Encode(msgs, enc.encode)
	if err != nil {
		t.Fatal(err)
	}
	s := make([]string, len(out))
	for i, b := range out {
		s[i] = string(b)
	}
	return s
}

func TestEncodeOnlyNewMessages(t *testing.T) {
	var c MessageCache
	var enc counter
	msgs := []llm.Message{text(llm.RoleUser, "one"), text(llm.RoleAssistant, "two")}
	if got := encodeAll(t, &c, msgs, &enc); !reflect.DeepEqual(got, []string{"user:one", "assistant:two"}) {
		t.Fatalf("first = %q", got)
	}
	msgs = append(msgs, text(llm.RoleUser, "three"))
	got := encodeAll(t, &c, msgs, &enc)
	if want := []string{"user:one", "assistant:two", "user:three"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second = %q, want %q", got, want)
	}
	if enc.calls != 3 || c.Reused() != 2 {
		t.Errorf("encode calls = %d, reused %d; want 3 and 2 (the third message only on the second request)", enc.calls, c.Reused())
	}
	// The same transcript again costs no encoding.
	encodeAll(t, &c, msgs, &enc)
	if enc.calls != 3 {
		t.Errorf("encode calls after a repeat = %d, want 3", enc.calls)
	}
}

func TestEncodeSeesChangesInPlace(t *testing.T) {
	var c MessageCache
	var enc counter
	tb := &llm.TextBlock{Text: "before"}
	args := []byte(`{"a":1}`)
	call := &llm.ToolCallBlock{ID: "c1", Name: "bash", Args: args}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{tb}},
		{Role: llm.RoleAssistant, Content: []llm.Block{call}},
	}
	encodeAll(t, &c, msgs, &enc)

	tb.Text = "after"
	if got := encodeAll(t, &c, msgs, &enc); got[0] != "user:after" {
		t.Errorf("after a block changed in place: %q", got)
	}
	if enc.calls != 3 {
		t.Errorf("encode calls = %d, want 3", enc.calls)
	}
	args[5] = '2' // the same bytes, changed under the block
	encodeAll(t, &c, msgs, &enc)
	if enc.calls != 4 {
		t.Errorf("encode calls after arguments changed in place = %d, want 4", enc.calls)
	}
	// A transcript cut at the front (as compaction does) shifts every
	// position: the messages are encoded again, and still right.
	msgs = msgs[1:]
	if got := encodeAll(t, &c, msgs, &enc); len(got) != 1 || got[0] != "assistant:" {
		t.Errorf("after a cut: %q", got)
	}
}

func TestNilCacheEncodesEverything(t *testing.T) {
	var enc counter
	msgs := []llm.Message{text(llm.RoleUser, "a"), text(llm.RoleAssistant, "b")}
	var c *MessageCache
	for range 2 {
		encodeAll(t, c, msgs, &enc)
	}
	if enc.calls != 4 {
		t.Errorf("encode calls = %d, want 4", enc.calls)
	}
}

func TestEncodeErrorKeepsCache(t *testing.T) {
	var c MessageCache
	var enc counter
	msgs := []llm.Message{text(llm.RoleUser, "a")}
	encodeAll(t, &c, msgs, &enc)
	boom := errors.New("boom")
	_, err := c.Encode(append(msgs, text(llm.RoleUser, "b")), func(*llm.Message) ([]byte, error) { return nil, boom })
	if !errors.Is(err, boom) || err.Error() != "message 1: boom" {
		t.Fatalf("err = %v", err)
	}
	encodeAll(t, &c, msgs, &enc)
	if enc.calls != 1 {
		t.Errorf("encode calls = %d, want 1: the failed call must not drop the cache", enc.calls)
	}
}

func TestConcurrentUse(t *testing.T) {
	var c MessageCache
	var enc counter
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var msgs []llm.Message
			for i := range 50 {
				msgs = append(msgs, text(llm.RoleUser, strconv.Itoa(g*1000+i)))
				out, err := c.Encode(msgs, enc.encode)
				if err != nil {
					t.Error(err)
					return
				}
				for j, b := range out {
					if want := "user:" + strconv.Itoa(g*1000+j); string(b) != want {
						t.Errorf("goroutine %d message %d = %q, want %q", g, j, b, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestHashCoversEveryField changes each field of each block type in turn
// and checks that the hash changes: a field the hash left out would let a
// changed message reuse a stale encoding.
func TestHashCoversEveryField(t *testing.T) {
	blocks := []llm.Block{
		&llm.TextBlock{Text: "t"},
		&llm.ThinkingBlock{Provider: "p", Text: "t", Signature: "s", Data: "d", ID: "i"},
		&llm.ImageBlock{MIME: "image/png", Data: []byte{1, 2}},
		&llm.ToolCallBlock{ID: "i", Name: "n", Args: []byte(`{}`), ArgsError: "e", Signature: "s"},
		&llm.ToolResultBlock{CallID: "c", Name: "n", Content: []llm.Block{&llm.TextBlock{Text: "r"}}},
	}
	seed := maphash.MakeSeed()
	sum := func(m *llm.Message) uint64 {
		var h maphash.Hash
		h.SetSeed(seed)
		if !writeMessage(&h, m) {
			t.Fatalf("block types of %v not known", m)
		}
		return h.Sum64()
	}
	for _, b := range blocks {
		v := reflect.ValueOf(b).Elem()
		for i := range v.NumField() {
			m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{b}}
			before := sum(&m)
			f := v.Field(i)
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			switch f.Kind() {
			case reflect.String:
				f.SetString(f.String() + "x")
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Slice:
				if f.Type().Elem().Kind() == reflect.Uint8 {
					f.SetBytes(append(append([]byte(nil), f.Bytes()...), 'x'))
				} else {
					f.Set(reflect.Append(f, reflect.ValueOf(llm.Block(&llm.TextBlock{Text: "more"}))))
				}
			default:
				t.Fatalf("%T.%s: kind %v not covered by this test", b, v.Type().Field(i).Name, f.Kind())
			}
			if sum(&m) == before {
				t.Errorf("%T.%s: changing it leaves the hash the same", b, v.Type().Field(i).Name)
			}
			f.Set(old)
		}
	}
	// The role counts too.
	a, u := text(llm.RoleAssistant, "x"), text(llm.RoleUser, "x")
	if sum(&a) == sum(&u) {
		t.Error("the role does not change the hash")
	}
	// Moving text from one block to the next changes it (lengths are hashed).
	ab := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "ab"}, &llm.TextBlock{Text: "c"}}}
	bc := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "a"}, &llm.TextBlock{Text: "bc"}}}
	if sum(&ab) == sum(&bc) {
		t.Error("block boundaries do not change the hash")
	}
}
