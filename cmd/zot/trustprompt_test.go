//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: the master the test types into and
// reads from, and the slave the command runs on.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestTrustPromptCtrlD: in the terminal client, Ctrl-D (end of input) at
// the question whether to trust a folder declines it for this start only:
// nothing is recorded, so zot untrust finds no decline to forget, and the
// next start asks again. zot untrust of a declined folder that is gone
// says it forgot the decline.
func TestTrustPromptCtrlD(t *testing.T) {
	dir := untrustedProject(t)
	home := realTemp(t)
	env := []string{"ZOT_HOME=" + home}
	ask := func(answer string) string {
		t.Helper()
		master, slave := openPty(t)
		cmd := exec.Command(zotBin, "--provider", "scripted", "--cwd", dir)
		cmd.Env = append(cleanEnv(), append(env, "TERM=xterm")...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		var out bytes.Buffer
		buf := make([]byte, 4096)
		deadline := time.Now().Add(20 * time.Second)
		sent := false
		for time.Now().Before(deadline) {
			master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _ := master.Read(buf)
			out.Write(buf[:n])
			if !sent && strings.Contains(out.String(), "[y/N]") {
				master.WriteString(answer)
				sent = true
			}
			if sent && strings.Contains(out.String(), "Not trusted") {
				time.Sleep(100 * time.Millisecond)
				n, _ := master.Read(buf)
				out.Write(buf[:n])
				return out.String()
			}
		}
		t.Fatalf("no answer to %q: %q", answer, out.String())
		return ""
	}
	if out := ask("\x04"); !strings.Contains(out, "asks again the next time") {
		t.Errorf("Ctrl-D: %q", out)
	}
	if out, _, code := runZot(t, "", env, "untrust", dir); code != 0 || out != dir+" was not trusted\n" {
		t.Errorf("zot untrust after Ctrl-D: %d %q", code, out)
	}
	if out := ask("n\r"); !strings.Contains(out, "will not ask again") {
		t.Errorf("n: %q", out)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runZot(t, "", env, "untrust", dir); code != 0 || !strings.Contains(out, "was declined") {
		t.Errorf("zot untrust of a declined folder that is gone: %d %q", code, out)
	}
}
