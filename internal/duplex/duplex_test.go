package duplex

import (
	"errors"
	"io"
	"testing"
)

func TestPair(t *testing.T) {
	a, b := Pair()
	go func() {
		a.Write([]byte("hello"))
		a.CloseWrite()
	}()
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "hello" {
		t.Fatalf("b read %q, %v", got, err)
	}
	go b.Write([]byte("back"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(a, buf); err != nil || string(buf) != "back" {
		t.Fatalf("a read %q, %v", buf, err)
	}
	b.Close()
	if _, err := a.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write to a closed end: %v", err)
	}
}
