package main

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// cutProxy relays loopback TCP connections to a target and can cut them
// all at once, as a network that goes away does, while it keeps
// accepting new ones.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	cuts  int
	wg    sync.WaitGroup
}

// startCutProxy relays 127.0.0.1:PORT to the host:port of target.
func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.copy(up, c)
		go p.copy(c, up)
	}
}

func (p *cutProxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection relayed so far.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.cuts++
}

// url is the proxy's ws:// URL (without a path: the clients add /acp).
func (p *cutProxy) url() string { return "ws://" + p.ln.Addr().String() }

// hostOf returns host:port of a ws:// URL.
func hostOf(t *testing.T, url string) string {
	t.Helper()
	rest := strings.TrimPrefix(url, "ws://")
	host, _, _ := strings.Cut(rest, "/")
	if host == "" {
		t.Fatalf("no host in %s", url)
	}
	return host
}

// slowWords is an answer of n words that streams for a while.
func slowWords(n int) string {
	var words []string
	for i := range n {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	return strings.Join(words, " ") + " THE END"
}
