package mcphost

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"zot.dev/zot/internal/mcpclient"
)

// nopWriteCloser is a server's stdin that nobody reads.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readAll reads the messages of a transport over in until the end, and
// returns them with the error that ended them and the log.
func readAll(t *testing.T, in string, max int) ([]*mcpclient.Message, string, error) {
	t.Helper()
	var log bytes.Buffer
	tr := newLineTransport(io.NopCloser(iotest.HalfReader(strings.NewReader(in))), nopWriteCloser{io.Discard}, &log, nil)
	if max > 0 {
		tr.max = max
	}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*mcpclient.Message
	for {
		m, err := c.Read(context.Background())
		if err != nil {
			tr.lines.Close()
			return msgs, log.String(), err
		}
		msgs = append(msgs, m)
	}
}

func TestLineTransportSkipsWhatIsNotJSONRPC(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 200<<10) + `"}}` + "\n"
	in := "banner line\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		"\n  \t\n" +
		"INFO " + strings.Repeat("y", 100<<10) + "\n" +
		big +
		`  [{"jsonrpc":"2.0","method":"m"}]` + "\r\n" +
		"trailing text without newline"
	msgs, log, err := readAll(t, in, 0)
	if !errors.Is(err, io.EOF) || len(msgs) != 3 {
		t.Fatalf("%d messages, then %v", len(msgs), err)
	}
	if r := msgs[1]; !r.IsResponse() || len(r.Result) < 200<<10 {
		t.Fatalf("second message %#v", msgs[1])
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], ": banner line") || !strings.Contains(lines[1], "INFO yyy") ||
		len(lines[1]) > skippedShown+100 || !strings.HasSuffix(lines[2], "trailing text without newline") {
		t.Fatalf("log:\n%s", log)
	}
}

// A message over the bound is skipped; when it is an answer, wherever its
// id is, the call it answers gets an error, and reading goes on.
func TestLineTransportAnswersAnOversizeMessageWithAnError(t *testing.T) {
	pad := strings.Repeat("z", 5000)
	in := `{"jsonrpc":"2.0","result":{"t":"` + pad + `","n":{"id":9}},"id":"call-7"}` + "\n" +
		`{"jsonrpc":"2.0","id":12,"result":{"t":"` + pad + `"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"t":"` + pad + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	msgs, log, err := readAll(t, in, 1000)
	if !errors.Is(err, io.EOF) || len(msgs) != 3 {
		t.Fatalf("%d messages, then %v; log:\n%s", len(msgs), err, log)
	}
	for i, want := range []string{`"call-7"`, `12`} {
		r := msgs[i]
		if !r.IsResponse() || string(r.ID) != want || r.Error == nil || !strings.Contains(r.Error.Error(), "over the 1000 bytes") {
			t.Fatalf("message %d: %#v", i, msgs[i])
		}
	}
	if r := msgs[2]; !r.IsResponse() || r.Error != nil || string(r.ID) != `3` {
		t.Fatalf("the message after them: %#v", msgs[2])
	}
	if strings.Count(log, "skipped message") != 3 {
		t.Fatalf("log:\n%s", log)
	}
}

// A line that starts like JSON but is not a message ends the reading
// with an error that quotes it.
func TestLineTransportBreaksOnABrokenLine(t *testing.T) {
	msgs, log, err := readAll(t, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"+`{"jsonrpc":"2.0","id":2,"result":{oops`+"\n"+`{"jsonrpc":"2.0","id":3,"result":{}}`+"\n", 0)
	if len(msgs) != 1 || err == nil || !strings.Contains(err.Error(), `line 2 of its stdout is not a JSON-RPC message`) || !strings.Contains(err.Error(), `"result":{oops`) {
		t.Fatalf("%d messages, then %v", len(msgs), err)
	}
	if !strings.Contains(log, `"result":{oops`) {
		t.Fatalf("log:\n%s", log)
	}
}
