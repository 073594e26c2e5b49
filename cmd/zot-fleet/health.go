package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
)

// health answers a worker's health checks (--health ADDR): GET /healthz
// is 200 while the worker serves and the cluster answers it, and 503,
// with the reason, while it starts, once the cluster does not answer, and
// once it is stopping; a load balancer or an orchestrator's probe reads
// it.
type health struct {
	cl    client.Client
	c     *cluster
	state atomic.Value // string: "starting", "serving", "stopping"

	srv  *http.Server
	done sync.WaitGroup
}

// healthTimeout bounds the question to the cluster of one check.
const healthTimeout = 5 * time.Second

// serveHealth listens on addr ("" for none) and answers health checks
// until close.
func serveHealth(addr string, cl client.Client, c *cluster, stderr io.Writer) (*health, error) {
	h := &health{cl: cl, c: c}
	h.state.Store("starting")
	if addr == "" {
		return h, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "zot-fleet worker: --health: %v\n", err)
		}
	}()
	return h, nil
}

// set records the worker's state.
func (h *health) set(state string) { h.state.Store(state) }

// close stops answering.
func (h *health) close() {
	if h.srv == nil {
		return
	}
	_ = h.srv.Close()
	h.done.Wait()
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	state := h.state.Load().(string)
	if state != "serving" {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, state)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if _, err := h.cl.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "the cluster at %s does not answer: %v\n", h.c.hostPort, err)
		return
	}
	fmt.Fprintf(w, "serving %s (tools on %s) at %s, namespace %s\n", h.c.queue, h.c.tools(), h.c.hostPort, h.c.namespace)
}
