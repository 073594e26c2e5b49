#!/usr/bin/env bash
# make fleet-demo: a Temporal dev server, two zot-fleet workers and a zot
# daemon --executor temporal on this machine, with the scripted provider
# (no key, no network). Ctrl-C stops them all.
set -euo pipefail
dir=${1:?usage: demo.sh DIR}
: "${ZOT_TEMPORAL:?} ${ZOT_BIN:?} ${ZOT_FLEET_BIN:?}"
mkdir -p "$dir/home" "$dir/work"
chmod 700 "$dir"
port=${FLEET_DEMO_PORT:-7233}
ui=${FLEET_DEMO_UI_PORT:-8233}
export ZOT_HOME="$dir/home" ZOT_SOCKET="$dir/daemon.sock"
pids=()
stop() {
	trap - INT TERM EXIT
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	echo "stopped; the dev server's state is in $dir/temporal.db"
}
trap stop INT TERM EXIT

"$ZOT_TEMPORAL" server start-dev --ip 127.0.0.1 --port "$port" --ui-port "$ui" \
	--db-filename "$dir/temporal.db" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
	--dynamic-config-value system.enableActivityEagerExecution=true \
	--dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
	--log-level error >"$dir/temporal.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done

for w in 1 2; do
	"$ZOT_FLEET_BIN" worker --temporal "127.0.0.1:$port" --provider scripted --identity "worker-$w" \
		--blobs "$dir/blobs" >"$dir/worker-$w.log" 2>&1 &
	pids+=($!)
done
"$ZOT_BIN" daemon --provider scripted --executor temporal --temporal "127.0.0.1:$port" \
	--blobs "$dir/blobs" >"$dir/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$ZOT_SOCKET" ] && break; sleep 0.1; done

cat <<EOT

The fleet is up:
  Temporal web UI (each turn is a workflow zot-<session>-…):  http://127.0.0.1:$ui
  the daemon's socket:   $ZOT_SOCKET
  talk to it:            ZOT_HOME=$ZOT_HOME ZOT_SOCKET=$ZOT_SOCKET $ZOT_BIN attach
  logs:                  $dir/{temporal,worker-1,worker-2,daemon}.log
  try:                   kill -9 one worker's pid mid-answer, and watch the other finish the turn
  workers' pids:         ${pids[1]} ${pids[2]}

Ctrl-C stops everything.
EOT
wait
