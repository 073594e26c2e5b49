package providertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Reply is one canned answer of a [Server].
type Reply struct {
	Status int               // HTTP status; 0 means 200
	Header map[string]string // extra response headers
	File   string            // testdata file served as the body
}

// SeenRequest is what a [Server] received.
type SeenRequest struct {
	Path   string      // URL path
	Query  string      // raw URL query
	Header http.Header // request headers
	Body   []byte      // request body
}

// Server is a loopback HTTP server that answers successive requests with
// its replies, repeating the last one, and records what it received.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	seen []SeenRequest
}

// NewServer starts a Server answering with replies (at least one) and
// closes it when the test ends. A reply with a 200 status is served as an
// event stream, any other as JSON.
func NewServer(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("providertest.NewServer needs at least one reply")
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.seen)
		s.seen = append(s.seen, SeenRequest{r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		s.mu.Unlock()
		rep := replies[min(n, len(replies)-1)]
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if rep.Status != 0 && rep.Status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.Write(Fixture(t, rep.File))
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []SeenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SeenRequest(nil), s.seen...)
}

// Fixture returns the contents of testdata/name, failing the test if it
// cannot be read.
func Fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

// HandlerServer starts a loopback server running h and closes it when the
// test ends. The request body is read before h runs, so that the server
// notices a client that goes away (and cancels r.Context()).
func HandlerServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Stall returns a handler that sends the head of a stream (headers and
// head, which may be empty) and then holds the connection open without a
// byte until the client goes away.
func Stall(head string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}
