#!/usr/bin/env bash
# Native PostgreSQL with pgvector for ragd's tests and benchmarks.
#
# Debian 12 packages PostgreSQL 15 but not pgvector. This builds pgvector from its source (the Go module proxy
# serves the repository github.com/pgvector/pgvector like any module) against Debian's server headers
# (postgresql-server-dev-15) and installs it into a private copy of Debian's PostgreSQL installation:
# PostgreSQL finds its share and lib directories relative to its binaries, so the copy works from any folder.
# The system installation stays without pgvector, which the missing-extension test relies on.
#
#   scripts/pgvector.sh start   build the copy if it is missing, start a throw-away cluster on 127.0.0.1,
#                               print its URL (a running cluster is reused)
#   scripts/pgvector.sh stop    stop the cluster and delete its data
#   scripts/pgvector.sh url     print the URL
#
# PGVECTOR_PORT (default 5498) chooses the port; PGVECTOR_VERSION (default v0.8.0) the pgvector release.
set -euo pipefail
port="${PGVECTOR_PORT:-5498}"
version="${PGVECTOR_VERSION:-v0.8.0}"
tmp="${TMPDIR:-/tmp}"
state="$tmp/ragd-pgvector-$port"
url="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pgbin" ]; then
  echo "pgvector.sh: no PostgreSQL in /usr/lib/postgresql (apt-get install postgresql)" >&2
  exit 1
fi
major=$(basename "$(dirname "$pgbin")")
tree="$tmp/ragd-pg$major-pgvector-$version"

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

build() {
  [ -f "$tree/done" ] && return 0
  if [ ! -d "/usr/include/postgresql/$major/server" ]; then
    echo "pgvector.sh: PostgreSQL $major server headers missing (apt-get install postgresql-server-dev-$major)" >&2
    exit 1
  fi
  local src work
  src=$(cd / && go mod download -json "github.com/pgvector/pgvector@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "pgvector.sh: cannot fetch pgvector $version from the Go module proxy" >&2; exit 1; }
  work=$(mktemp -d)
  cp -r "$src/." "$work/src"
  chmod -R u+w "$work/src"
  echo "pgvector.sh: building pgvector $version for PostgreSQL $major" >&2
  make -C "$work/src" -s -j"$(nproc)" PG_CONFIG="$pgbin/pg_config" with_llvm=no >&2
  make -C "$work/src" -s install PG_CONFIG="$pgbin/pg_config" with_llvm=no DESTDIR="$work/stage" >&2
  rm -rf "$tree.partial"
  mkdir -p "$tree.partial/usr/lib/postgresql" "$tree.partial/usr/share/postgresql"
  cp -a "/usr/lib/postgresql/$major" "$tree.partial/usr/lib/postgresql/"
  cp -a "/usr/share/postgresql/$major" "$tree.partial/usr/share/postgresql/"
  cp -a "$work/stage/usr/lib/postgresql/$major/lib/." "$tree.partial/usr/lib/postgresql/$major/lib/"
  cp -a "$work/stage/usr/share/postgresql/$major/extension/." "$tree.partial/usr/share/postgresql/$major/extension/"
  chmod -R a+rX "$tree.partial"
  touch "$tree.partial/done"
  rm -rf "$tree" && mv "$tree.partial" "$tree"
  rm -rf "$work"
}

case "${1:-}" in
start)
  if [ -f "$state/data/postmaster.pid" ] && listening; then echo "$url"; exit 0; fi
  if listening; then echo "pgvector.sh: port $port is in use by another process" >&2; exit 1; fi
  build
  bin="$tree/usr/lib/postgresql/$major/bin"
  rm -rf "$state" && mkdir -p "$state"
  chmod 755 "$state"
  [ "$(id -u)" -eq 0 ] && chown postgres "$state"
  as_postgres "$bin/initdb" -D "$state/data" -U postgres --auth=trust -E UTF8 --no-sync >"$state/initdb.log" 2>&1 ||
    { cat "$state/initdb.log" >&2; exit 1; }
  as_postgres "$bin/pg_ctl" -D "$state/data" -l "$state/log" -w -t 60 \
    -o "-p $port -k $state -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=256MB -c max_connections=200" \
    start >/dev/null || { cat "$state/log" >&2; exit 1; }
  echo "$url"
  ;;
stop)
  if [ -f "$state/data/postmaster.pid" ]; then
    as_postgres "$tree/usr/lib/postgresql/$major/bin/pg_ctl" -D "$state/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$state"
  ;;
url)
  echo "$url"
  ;;
*)
  echo "usage: $0 start|stop|url" >&2
  exit 2
  ;;
esac
