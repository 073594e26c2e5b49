// Package fakeprovider is a loopback model provider for zot's benchmarks.
//
// It speaks the streaming formats of the Anthropic Messages API
// (POST /v1/messages) and of the OpenAI Chat Completions API
// (POST /v1/chat/completions) and picks its answer from the request: a
// short answer, a long answer of many fixed-size text deltas, or a bash tool
// round trip. See [PromptShort], [PromptDeltas] and [PromptTool].
package fakeprovider

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody bounds a request body; a long benchmark transcript stays far below.
const maxBody = 256 << 20

// writeChunk is the size of the writes an answer is sent in; each write is
// flushed so the client sees a stream, not one response at the end.
const writeChunk = 64 << 10

// format is a vendor streaming format.
type format int

const (
	formatAnthropic format = iota
	formatOpenAI
)

// cacheKey names a pre-rendered long answer.
type cacheKey struct {
	format format
	n      int
}

// Stats counts what the fake provider has served.
type Stats struct {
	// Requests is the number of model requests answered with a stream.
	Requests int64
	// ToolCalls is the number of answers that asked for a tool.
	ToolCalls int64
	// ToolResults is the number of requests whose last message carried a
	// tool result, and ToolResultsOK those whose result held the output of
	// [ToolCommand].
	ToolResults   int64
	ToolResultsOK int64
	// Rejected is the number of requests answered with an error status.
	Rejected int64
	// BodyBytes is the size in bytes of all the request bodies read.
	BodyBytes int64
}

// Server is a running fake provider on 127.0.0.1. It is safe for
// concurrent use.
type Server struct {
	url  string
	srv  *http.Server
	done chan error // the Serve goroutine's result

	ids atomic.Int64

	mu    sync.Mutex
	cache map[cacheKey][]byte

	requests, toolCalls, toolResults, toolResultsOK, rejected, bodyBytes atomic.Int64
}

// New starts a fake provider on a free loopback port.
func New() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	s := &Server{
		url:   "http://" + ln.Addr().String(),
		cache: map[cacheKey][]byte{},
		done:  make(chan error, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, formatAnthropic)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, formatOpenAI)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// AnthropicURL is the base URL to give an Anthropic client: the host root,
// to which the client adds /v1/messages.
func (s *Server) AnthropicURL() string { return s.url }

// OpenAIURL is the base URL to give an OpenAI client: the API root with
// /v1, to which the client adds /chat/completions.
func (s *Server) OpenAIURL() string { return s.url + "/v1" }

// Prerender renders the answers to [PromptDeltas](n) in both formats now,
// so the first request that asks for them is not slowed by rendering.
func (s *Server) Prerender(n int) {
	s.cached(formatAnthropic, n)
	s.cached(formatOpenAI, n)
}

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	return Stats{
		Requests:      s.requests.Load(),
		ToolCalls:     s.toolCalls.Load(),
		ToolResults:   s.toolResults.Load(),
		ToolResultsOK: s.toolResultsOK.Load(),
		Rejected:      s.rejected.Load(),
		BodyBytes:     s.bodyBytes.Load(),
	}
}

// Close stops the server, closing any open connection, and waits for it.
func (s *Server) Close() error {
	closeErr := s.srv.Close()
	if err := <-s.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving fake provider: %w", err)
	}
	if closeErr != nil {
		return fmt.Errorf("closing fake provider: %w", closeErr)
	}
	return nil
}

// cached returns the pre-rendered answer of n deltas in format f,
// rendering it on first use.
func (s *Server) cached(f format, n int) []byte {
	key := cacheKey{f, n}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.cache[key]; ok {
		return b
	}
	b := render(f, scenario{kind: kindText, n: n}, "deltas")
	s.cache[key] = b
	return b
}

// render renders sc in format f.
func render(f format, sc scenario, id string) []byte {
	if f == formatOpenAI {
		return renderOpenAI(sc, id)
	}
	return renderAnthropic(sc, id)
}

// serve answers one model request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, f format) {
	body, err := readBody(r)
	if err != nil {
		s.reject(w, f, http.StatusBadRequest, err.Error())
		return
	}
	s.bodyBytes.Add(int64(len(body)))
	var t turn
	if f == formatOpenAI {
		t, err = parseOpenAI(body)
	} else {
		t, err = parseAnthropic(body)
	}
	if err != nil {
		s.reject(w, f, http.StatusBadRequest, err.Error())
		return
	}
	sc, err := choose(t)
	if err != nil {
		s.reject(w, f, http.StatusBadRequest, err.Error())
		return
	}
	s.requests.Add(1)
	if t.toolResult {
		s.toolResults.Add(1)
		if isToolOK(t.toolText) {
			s.toolResultsOK.Add(1)
		}
	}
	var out []byte
	switch {
	case sc.kind == kindToolCall:
		s.toolCalls.Add(1)
		out = render(f, sc, s.nextID())
	case sc.deltas == nil:
		out = s.cached(f, sc.n)
	default:
		out = render(f, sc, s.nextID())
	}
	writeStream(w, out)
}

// nextID returns a fresh id for the messages and tool calls of an answer.
func (s *Server) nextID() string { return strconv.FormatInt(s.ids.Add(1), 10) }

// readBody reads a request body up to maxBody.
func readBody(r *http.Request) ([]byte, error) {
	body, err := readAllLimit(r.Body, r.ContentLength, maxBody)
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// writeStream sends an SSE body in large flushed writes. A client that
// goes away ends the answer early; there is no one left to tell.
func writeStream(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for len(body) > 0 {
		n := min(len(body), writeChunk)
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		body = body[n:]
	}
}

// reject answers with an error status in the vendor's error format.
func (s *Server) reject(w http.ResponseWriter, f format, status int, msg string) {
	s.rejected.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if f == formatOpenAI {
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error"}}`, quote(msg))
		return
	}
	fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%s}}`, quote(msg))
}
