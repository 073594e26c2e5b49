package wsserve

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCloseEndsMountedHandlers: Close ends the requests a handler
// mounted with Handle is still serving (a live stream, say) once the
// grace of its shutdown is over, instead of leaving their goroutines and
// connections behind the closed listener.
func TestCloseEndsMountedHandlers(t *testing.T) {
	s, err := Listen(Config{URL: "ws://127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	started, ended := make(chan struct{}), make(chan struct{})
	s.Handle("/stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(ended)
	}))
	url := "http://" + strings.TrimSuffix(strings.TrimPrefix(s.Addr(), "ws://"), "/acp") + "/stream"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = s.Close()
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the mounted handler still runs 10 s after Close")
	}
	<-closed
}
