package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, which
// Linux fixes at 100 for user space).
const clockTick = 10 * time.Millisecond

// cpuSample is a process's CPU time at one moment, from two sources:
// /proc/PID/stat counts the whole process, threads that ended included, in
// clock ticks; /proc/PID/task/*/schedstat counts the live threads in
// nanoseconds.
type cpuSample struct {
	ticks   time.Duration
	sched   time.Duration
	schedOK bool
}

// cpuDelta is the CPU time spent between two samples. It uses the
// nanosecond count unless the tick count shows that time went to threads
// that have ended since.
func cpuDelta(a, b cpuSample) time.Duration {
	ticks := b.ticks - a.ticks
	if !a.schedOK || !b.schedOK {
		return ticks
	}
	sched := b.sched - a.sched
	if sched < 0 || ticks-sched > 2*clockTick {
		return ticks
	}
	return sched
}

// parseStatCPU returns utime+stime from the contents of /proc/PID/stat.
func parseStatCPU(stat []byte) (time.Duration, error) {
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no ')' in stat")
	}
	fields := bytes.Fields(stat[i+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat has %d fields after the name", len(fields))
	}
	var total int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing CPU time %q: %w", f, err)
		}
		total += n
	}
	return time.Duration(total) * clockTick, nil
}

// parseSchedstat returns the run time in nanoseconds from the contents of
// /proc/PID/task/TID/schedstat.
func parseSchedstat(b []byte) (time.Duration, error) {
	fields := bytes.Fields(b)
	if len(fields) == 0 {
		return 0, errors.New("empty schedstat")
	}
	n, err := strconv.ParseInt(string(fields[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing run time %q: %w", fields[0], err)
	}
	return time.Duration(n), nil
}

// parseVmHWM returns the peak resident set size in bytes from the contents
// of /proc/PID/status.
func parseVmHWM(status []byte) (int64, error) { return parseStatusKB(status, "VmHWM") }

// parseStatusKB returns the field name of the contents of /proc/PID/status,
// a size in kB, in bytes.
func parseStatusKB(status []byte, name string) (int64, error) {
	prefix := []byte(name + ":")
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), prefix)
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", name, sc.Bytes())
		}
		kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s %q: %w", name, fields[0], err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no %s line in status", name)
}
