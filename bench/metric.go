package bench

import "fmt"

// Metric is one row of the report.
type Metric int

// The metrics, in report order.
const (
	// SpawnPing is the time from starting a process to reading the response
	// to its first ping, in milliseconds.
	SpawnPing Metric = iota
	// EventsPerSec is the rate of text_delta events while one prompt
	// streams the long answer.
	EventsPerSec
	// StreamCPU is the CPU time the process spent on that prompt, in
	// milliseconds.
	StreamCPU
	// SeqLatency is the median latency of short prompts sent in sequence to
	// one process, from writing the prompt to reading its done, in
	// milliseconds.
	SeqLatency
	// SeqCPU is the CPU time the process spent per prompt of that
	// sequence, in milliseconds: the part of the latency that is the
	// binary's own work, and less subject to a shared machine's noise.
	SeqCPU
	// ToolRoundTrip is the median time of a prompt with a bash tool round
	// trip, in milliseconds.
	ToolRoundTrip
	// ReadRoundTrip is the median time of a prompt with a read tool round
	// trip (a small text file), in milliseconds.
	ReadRoundTrip
	// PeakRSS is the largest peak resident set size of a repetition's
	// processes, in MiB.
	PeakRSS
	// PingRSSFile and PingRSSAnon are a process's resident memory right
	// after its first ping answer, in MiB: the part backed by files (the
	// pages of the binary it has touched) and the anonymous part (heap,
	// stacks).
	PingRSSFile
	PingRSSAnon
	// EndRSSFile and EndRSSAnon are the same at the end of a process's
	// work, before its stdin closes: where the peak is, as the peak is
	// the steady state of a process that has started what it starts.
	EndRSSFile
	EndRSSAnon
	numMetrics
)

// The metrics of the section on abort and large input. Only zot and the
// --vs binaries are measured on them (the floor has no abort and no read
// tool), and their goals are their own, not ratios to the floor.
const (
	// AbortSleep is the time from writing an abort to reading the done of
	// the prompt it cut while bash runs `sleep 30`, in milliseconds.
	AbortSleep Metric = numMetrics + iota
	// AbortRead is the same while the read tool scans a file whose first
	// line is longer than the tool reads (1 GiB).
	AbortRead
	// BigPromptRSS is the peak resident set size of a process that took
	// one prompt line of Config.BigPrompt bytes, in MiB.
	BigPromptRSS
	numAllMetrics
)

// Metrics lists the metrics of the per-provider sections in report order.
func Metrics() []Metric {
	ms := make([]Metric, numMetrics)
	for i := range ms {
		ms[i] = Metric(i)
	}
	return ms
}

// ExtraMetrics lists the metrics of the section on abort and large input.
func ExtraMetrics() []Metric {
	return []Metric{AbortSleep, AbortRead, BigPromptRSS}
}

// bigPromptGoal bounds BigPromptRSS as a multiple of the prompt line.
const bigPromptGoal = 3

// Target is a goal for a binary's value as a ratio to the floor's.
type Target struct {
	// AtLeast is true when the ratio must be at least Ratio, false when it
	// must be at most Ratio.
	AtLeast bool
	Ratio   float64
}

// Met reports whether ratio meets the target.
func (t Target) Met(ratio float64) bool {
	if t.AtLeast {
		return ratio >= t.Ratio
	}
	return ratio <= t.Ratio
}

// String renders the target as "≤ 1.5×" or "≥ 0.9×".
func (t Target) String() string {
	op := "≤"
	if t.AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("%s %g×", op, t.Ratio)
}

// Target returns the metric's target and whether it has one.
func (m Metric) Target() (Target, bool) {
	switch m {
	case SpawnPing:
		return Target{Ratio: 1.5}, true
	case EventsPerSec:
		return Target{AtLeast: true, Ratio: 0.9}, true
	case SeqLatency:
		return Target{Ratio: 1.3}, true
	case PeakRSS:
		return Target{Ratio: 1.25}, true
	}
	return Target{}, false
}

// VsTarget returns the goal of the metric for zot as a ratio to a --vs
// binary's value, and whether it has one: zot's tool round trips against
// another runtime's.
func (m Metric) VsTarget() (Target, bool) {
	switch m {
	case ToolRoundTrip:
		return Target{Ratio: 1.0}, true
	case ReadRoundTrip:
		return Target{Ratio: 0.8}, true
	}
	return Target{}, false
}

// vsMetrics are the rows of the comparison of zot with the --vs binaries.
var vsMetrics = []Metric{SpawnPing, SeqLatency, ToolRoundTrip, ReadRoundTrip, PeakRSS}

// label names the metric in the report for a run of cfg.
func (m Metric) label(cfg Config) string {
	switch m {
	case SpawnPing:
		return "spawn → ping (ms)"
	case EventsPerSec:
		return fmt.Sprintf("stream %d × 16 B deltas (text_delta events/s)", cfg.Deltas)
	case StreamCPU:
		return fmt.Sprintf("CPU for the %d-delta prompt (ms)", cfg.Deltas)
	case SeqLatency:
		return fmt.Sprintf("%d sequential short prompts (median ms per prompt)", cfg.Seq)
	case SeqCPU:
		return "CPU per sequential prompt (ms)"
	case ToolRoundTrip:
		return fmt.Sprintf("prompt with a bash tool round trip (median of %d, ms)", cfg.Trips)
	case ReadRoundTrip:
		return fmt.Sprintf("prompt with a read tool round trip (median of %d, ms)", cfg.Trips)
	case PeakRSS:
		return "peak RSS (MiB)"
	case PingRSSFile:
		return "resident after the first ping: file-backed (MiB)"
	case PingRSSAnon:
		return "resident after the first ping: anonymous (MiB)"
	case EndRSSFile:
		return "resident at the end of the work: file-backed (MiB)"
	case EndRSSAnon:
		return "resident at the end of the work: anonymous (MiB)"
	case AbortSleep:
		return "abort → done while bash runs `" + sleepCommand + "` (median ms)"
	case AbortRead:
		return "abort → done while read scans a 1 GiB line (median ms)"
	case BigPromptRSS:
		return fmt.Sprintf("peak RSS taking one %s prompt line (MiB)", byteSize(cfg.BigPrompt))
	}
	return fmt.Sprintf("metric %d", int(m))
}

// format renders a value of the metric.
func (m Metric) format(v float64) string {
	switch m {
	case EventsPerSec:
		return fmt.Sprintf("%.0f", v)
	case PeakRSS, BigPromptRSS, PingRSSFile, PingRSSAnon, EndRSSFile, EndRSSAnon:
		return fmt.Sprintf("%.1f", v)
	}
	if v < 1 {
		return fmt.Sprintf("%.3f", v)
	}
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// byteSize renders n bytes as "64 MiB", "4 KiB" or "100 B".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
