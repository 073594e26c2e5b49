package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// However `zot rpc` ends (the end of its input, SIGTERM, SIGINT), nothing
// its extensions started is left: not the extension, not a child it left
// in its process group, and, at the end of input, not one that ignores
// shutdown and SIGTERM (which takes the whole ladder, 3 s).
func TestExtensionsDieWithRPC(t *testing.T) {
	for _, how := range []string{"eof", "sigterm", "sigint"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--ext", pyExtension(t, dir, "kids", "group")}
			if how == "eof" {
				args = append(args, "--ext", pyExtension(t, dir, "mule", "stubborn"))
			}
			p := start(t, nil, rpcArgs(t, args...)...)
			r, _ := p.call(`{"id":"1","type":"get_extensions"}`)
			wantResponse(t, r, "get_extensions", true, "")
			var parent, child int
			for parent == 0 {
				ev := p.event("ext_notify", nil).(*wire.ExtNotifyEvent)
				if strings.HasPrefix(ev.Message, "pids ") {
					fmt.Sscanf(ev.Message, "pids %d %d", &parent, &child)
				}
			}
			pids := []int{parent, child}
			if how == "eof" {
				pids = append(pids, childOf(t, p.cmd.Process.Pid, parent)) // the mule
			}
			switch how {
			case "eof":
				p.exit()
			case "sigterm":
				p.cmd.Process.Signal(syscall.SIGTERM)
				p.wait()
			case "sigint":
				p.cmd.Process.Signal(syscall.SIGINT)
				p.wait()
			}
			deadline := time.Now().Add(hangGuard)
			for _, pid := range pids {
				for processRuns(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("process %d outlived zot rpc (%s)", pid, how)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// childOf returns a child process of ppid other than not, waiting until
// it is there.
func childOf(t *testing.T, ppid, not int) int {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == not {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			i := bytes.LastIndexByte(stat, ')')
			if i < 0 {
				continue
			}
			fields := strings.Fields(string(stat[i+1:]))
			if len(fields) > 1 && fields[1] == strconv.Itoa(ppid) {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no second child of %d", ppid)
	return 0
}
