//go:build unix

package subproc_test

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"zot.dev/zot/internal/subproc"
)

// A child that answers over its stdin and stdout, then is stopped: closing
// its stdin is enough for this one.
func ExampleProcess_Stop() {
	p, err := subproc.Start(context.Background(), subproc.Command{
		Path:       "/bin/sh",
		Args:       []string{"-c", `while read -r line; do echo "got $line"; done`},
		StdinPipe:  true,
		StdoutPipe: true,
		StdinGrace: time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintln(p.Stdin(), "hello")
	answer, _ := bufio.NewReader(p.Stdout()).ReadString('\n')
	fmt.Print(answer)
	// Nothing more is wanted from it: Stop need not wait for it to be read.
	p.Stdout().Close()
	esc, err := p.Stop(context.Background())
	fmt.Println(esc, err)
	// Output:
	// got hello
	// not signalled <nil>
}
