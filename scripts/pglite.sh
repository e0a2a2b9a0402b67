#!/usr/bin/env bash
# Starts, stops and locates the PGlite server that ragd's PostgreSQL tests use (PostgreSQL in WebAssembly
# with pgvector, served on 127.0.0.1 over the wire protocol; see test/pglite/server.mjs).
#
#   scripts/pglite.sh start   install the npm packages if missing, start the server in the background, wait
#                             until it accepts connections, print its URL (a running server is reused)
#   scripts/pglite.sh stop    stop the server started by `start`
#   scripts/pglite.sh url     print the URL
#
# PGLITE_PORT (default 5499) chooses the port. The URL carries the settings PGlite needs: one connection per
# pool (all connections share one session) and no named prepared statements.
set -euo pipefail
cd "$(dirname "$0")/../test/pglite"
port="${PGLITE_PORT:-5499}"
state="${TMPDIR:-/tmp}/ragd-pglite-$port"
url="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable&pool_max_conns=1&default_query_exec_mode=cache_describe"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

running() { [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; }

case "${1:-}" in
start)
  if running; then echo "$url"; exit 0; fi
  if listening; then echo "pglite.sh: port $port is in use by another process" >&2; exit 1; fi
  if [ ! -d node_modules/@electric-sql/pglite-pgvector ] || [ ! -d node_modules/@electric-sql/pglite ]; then
    npm ci --no-audit --no-fund --loglevel=error >&2
  fi
  mkdir -p "$state"
  nohup node server.mjs --port "$port" >"$state/log" 2>&1 &
  echo $! >"$state/pid"
  for _ in $(seq 1 300); do
    if listening; then echo "$url"; exit 0; fi
    if ! running; then break; fi
    sleep 0.2
  done
  echo "pglite.sh: server did not start; its log:" >&2
  cat "$state/log" >&2
  exit 1
  ;;
stop)
  if running; then
    pid=$(cat "$state/pid")
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$state/pid"
  ;;
url)
  echo "$url"
  ;;
*)
  echo "usage: $0 start|stop|url" >&2
  exit 2
  ;;
esac
