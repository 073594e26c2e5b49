package bench

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The name holds spaces and a ')', as a process may name itself.
	stat := "4242 (zot (rpc) x) S 1 4242 4242 0 -1 4194560 1200 0 0 0 37 12 0 0 20 0 9 0 123456 1000000 2000 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 49 * clockTick; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	got, err := parseSchedstat([]byte("120489 188338 2\n"))
	if err != nil || got != 120489*time.Nanosecond {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := parseSchedstat([]byte("\n")); err == nil {
		t.Error("empty schedstat parsed")
	}
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tzot\nVmPeak:\t  800000 kB\nVmHWM:\t   13204 kB\nVmRSS:\t   12000 kB\n"
	got, err := parseVmHWM([]byte(status))
	if err != nil || got != 13204*1024 {
		t.Errorf("got %d, %v", got, err)
	}
	for _, bad := range []string{"Name:\tzot\n", "VmHWM:\t12 MB\n", "VmHWM:\tlots kB\n"} {
		if _, err := parseVmHWM([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestCPUDelta(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		a, b cpuSample
		want time.Duration
	}{
		{"nanoseconds preferred", cpuSample{ticks: 10 * ms, sched: 12 * ms, schedOK: true},
			cpuSample{ticks: 40 * ms, sched: 43 * ms, schedOK: true}, 31 * ms},
		{"ticks without schedstat", cpuSample{ticks: 10 * ms}, cpuSample{ticks: 40 * ms, sched: 5 * ms, schedOK: true}, 30 * ms},
		{"ticks when threads ended", cpuSample{ticks: 10 * ms, sched: 12 * ms, schedOK: true},
			cpuSample{ticks: 90 * ms, sched: 20 * ms, schedOK: true}, 80 * ms},
		{"ticks when the count went back", cpuSample{ticks: 10 * ms, sched: 12 * ms, schedOK: true},
			cpuSample{ticks: 10 * ms, sched: 2 * ms, schedOK: true}, 0},
	} {
		if got := cpuDelta(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Errorf("median reordered its input: %v", in)
			}
		}
	}
}
