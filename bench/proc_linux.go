package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// readCPU samples a running process's CPU time from /proc.
func readCPU(pid int) (cpuSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return cpuSample{}, fmt.Errorf("reading CPU time: %w", err)
	}
	ticks, err := parseStatCPU(stat)
	if err != nil {
		return cpuSample{}, fmt.Errorf("reading %s/stat: %w", dir, err)
	}
	s := cpuSample{ticks: ticks}
	s.sched, s.schedOK = readSched(dir)
	return s, nil
}

// readSched sums the run time of a process's live threads; ok is false
// when any of them cannot be read.
func readSched(dir string) (total time.Duration, ok bool) {
	tasks, err := filepath.Glob(dir + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		d, err := parseSchedstat(b)
		if err != nil {
			return 0, false
		}
		total += d
	}
	return total, true
}

// readPeakRSS returns a running process's peak resident set size in bytes
// (VmHWM).
func readPeakRSS(pid int) (int64, error) {
	p := "/proc/" + strconv.Itoa(pid) + "/status"
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("reading peak RSS: %w", err)
	}
	n, err := parseVmHWM(b)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return n, nil
}

// readResident returns a running process's resident memory in bytes, the
// part backed by files (its binary's pages, mostly) and the anonymous part
// (heap, stacks).
func readResident(pid int) (file, anon int64, err error) {
	p := "/proc/" + strconv.Itoa(pid) + "/status"
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, 0, fmt.Errorf("reading resident memory: %w", err)
	}
	if file, err = parseStatusKB(b, "RssFile"); err == nil {
		anon, err = parseStatusKB(b, "RssAnon")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return file, anon, nil
}
