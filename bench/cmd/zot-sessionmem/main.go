// Command zot-sessionmem measures what one zot daemon session costs when
// it runs one extension and one MCP server: the daemon's own resident
// memory per session, and that of the two processes the session starts.
//
//	zot-sessionmem -zot bin/zot -ext bin/bench-ext/hello -mcp bin/zot-bench-mcp -n 20
//
// It starts `zot daemon --provider scripted --ext <ext>` in a scratch zot
// home, opens one session (what every daemon allocates once is not
// counted), then n more, each naming the MCP server in session/new, and
// reports the daemon's VmRSS growth ÷ n and the children's VmRSS ÷ their
// sessions. With -bare it opens the sessions without the extension and
// the MCP server, for comparison. Linux only (/proc).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	zot := flag.String("zot", "bin/zot", "the zot binary")
	ext := flag.String("ext", "bin/bench-ext/hello", "the extension's folder")
	mcp := flag.String("mcp", "bin/zot-bench-mcp", "the MCP server's program (stdio)")
	n := flag.Int("n", 20, "sessions measured, after the first")
	bare := flag.Bool("bare", false, "sessions without the extension and the MCP server")
	settle := flag.Duration("settle", 2*time.Second, "wait after opening the sessions, for their extensions and servers to start")
	flag.Parse()
	if err := run(*zot, *ext, *mcp, *n, *bare, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "zot-sessionmem:", err)
		os.Exit(1)
	}
}

func run(zot, ext, mcp string, n int, bare bool, settle time.Duration) error {
	dir, err := os.MkdirTemp("", "zot-sessionmem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, p := range []*string{&zot, &ext, &mcp} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	sock := filepath.Join(dir, "d.sock")
	args := []string{"daemon", "--provider", "scripted"}
	if !bare {
		args = append(args, "--ext", ext)
	}
	cmd := exec.Command(zot, args...)
	cmd.Env = append(os.Environ(), "ZOT_HOME="+filepath.Join(dir, "home"), "ZOT_SOCKET="+sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = net.Dial("unix", sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon did not listen: %w", err)
		}
	}
	defer c.Close()
	rc := &client{w: c, r: bufio.NewReader(c)}
	if err := rc.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return err
	}
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		return err
	}
	servers := "[]"
	if !bare {
		servers = fmt.Sprintf(`[{"name":"bench","command":%q,"args":[],"env":[]}]`, mcp)
	}
	params := fmt.Sprintf(`{"cwd":%q,"mcpServers":%s}`, cwd, servers)
	if err := rc.call("session/new", params); err != nil {
		return err
	}
	time.Sleep(settle)
	before, err := rss(cmd.Process.Pid)
	if err != nil {
		return err
	}
	for i := range n {
		if err := rc.call("session/new", params); err != nil {
			return fmt.Errorf("session %d: %w", i+2, err)
		}
	}
	time.Sleep(settle)
	after, err := rss(cmd.Process.Pid)
	if err != nil {
		return err
	}
	kids, count := childrenRSS(cmd.Process.Pid)
	fmt.Printf("sessions: %d (+1 first)\n", n)
	fmt.Printf("daemon VmRSS: %.1f MiB after the first session, %.1f MiB after all\n", float64(before)/(1<<20), float64(after)/(1<<20))
	fmt.Printf("daemon RSS per session: %.1f KiB\n", float64(after-before)/1024/float64(n))
	if !bare {
		fmt.Printf("children: %d processes, %.1f MiB, %.1f MiB per session (its extension and MCP server)\n",
			count, float64(kids)/(1<<20), float64(kids)/(1<<20)/float64(n+1))
	}
	return nil
}

// client speaks JSON-RPC 2.0, one line a message, and skips notifications.
type client struct {
	w    net.Conn
	r    *bufio.Reader
	next int
}

func (c *client) call(method, params string) error {
	c.next++
	id := c.next
	if _, err := fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return err
		}
		var m struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		if m.ID == nil || *m.ID != id {
			continue
		}
		if len(m.Error) > 0 {
			return fmt.Errorf("%s: %s", method, m.Error)
		}
		return nil
	}
}

// rss returns a process's VmRSS in bytes.
func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// childrenRSS sums the VmRSS of pid's descendants.
func childrenRSS(pid int) (total int64, count int) {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 1 {
				parent[p], _ = strconv.Atoi(f[1])
			}
		}
	}
	under := func(p int) bool {
		for i := 0; i < 64 && p > 1; i++ {
			p = parent[p]
			if p == pid {
				return true
			}
		}
		return false
	}
	for p := range parent {
		if under(p) {
			if r, err := rss(p); err == nil {
				total += r
				count++
			}
		}
	}
	return total, count
}
