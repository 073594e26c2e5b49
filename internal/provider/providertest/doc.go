// Package providertest holds the test helpers shared by zot's providers
// (anthropic, openai, responses, gemini, and scripted for its sleeps and
// hang guard), so that each package's tests hold only what is its own:
// fixtures, transcripts and the vendor's tables.
//
//   - Dials: a package defines one [Open] over its own Config; its methods
//     give the [Dial]s the helpers take (with a key, with a short idle
//     timeout, with few attempts). [SimpleRequest] is a one-message request.
//   - Fixtures: [NewServer] replays testdata files and records the requests;
//     [Fixture] reads one; [HandlerServer] and [Stall] serve by hand.
//     [Replay] and [Stream] make one call and return a [Run] with its
//     response, error, requests, sleeps and events, which
//     [Run.WantEvents], [Run.WantContent] and [Run.WantEnd] check.
//   - Scenarios every provider must pass: [TextOnly], [InvalidToolArgs],
//     retries ([RetriedOnce], [RetryAfterHonoured], [GivesUp]), errors
//     that are not retried ([NotRetried], [NotRetriedInStream],
//     [ErrorAfterOutput]), cut and stalled streams, cancellation.
//   - Requests: [GoldenRequest] (with -update), [CachedMatchesFresh],
//     [CachedMatchesFreshWith], and [LongTextSpliced] over [LongText];
//     tables: [StopReasons].
//   - Decoding: [DecodeErrorNamesNoGoType].
//   - Vendor types: [VendorTypes] holds request types transcribed from a
//     vendor's official SDK; [VendorTypes.CheckBody] checks a body
//     against them.
//   - Anthropic's preserved thinking: [BoundServer] runs the vendor's
//     prefix check on the thinking blocks sent back.
//   - Benchmarks: [StreamBenchmark].
//   - Recorders: [Sleeps] for backoff delays, [Recorder] for events,
//     [HangGuard] and [RunAsync] against hangs, [Dump] for messages.
//
// It is imported only by _test.go files. Package httpcall's own tests
// keep their own sleep recorder: this package imports httpcall.
package providertest
