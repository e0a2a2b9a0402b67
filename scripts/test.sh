#!/usr/bin/env bash
# Runs every check and test of ragd. Installs what the tests need (Debian packages after one apt-get update,
# npm packages, Go tools) and skips what is already there. `scripts/test.sh lint` runs only the static checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:$(go env GOPATH)/bin"

log() { printf '\n=== %s\n' "$*"; }

# --- disk -----------------------------------------------------------------------------------------------
# The tests write binaries, data directories and a PostgreSQL cluster under $TMPDIR and build into Go's cache;
# a full disk shows up as PostgreSQL crashing mid-run ("the database system is in recovery mode"). Free the Go
# build cache (a cache: rebuilt on demand) when space is short, and stop with a clear message if it still is.
free_gib() { df -Pk "$1" 2>/dev/null | awk 'NR==2 {print int($4/1048576)}'; }
tmpdir="${TMPDIR:-/tmp}"
if [ "$(free_gib "$tmpdir")" -lt 10 ]; then
  log "only $(free_gib "$tmpdir") GiB free under $tmpdir: go clean -cache"
  go clean -cache
fi
if [ "$(free_gib "$tmpdir")" -lt 5 ]; then
  echo "scripts/test.sh: only $(free_gib "$tmpdir") GiB free under $tmpdir; the tests need about 5 GiB" >&2
  exit 1
fi

# --- Debian packages -------------------------------------------------------------------------------------
need_apt=()
command -v pdftotext >/dev/null 2>&1 || need_apt+=(poppler-utils)
command -v qpdf >/dev/null 2>&1 || need_apt+=(qpdf)
command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# OCR of scanned PDF pages (internal/extract, test/e2e): Tesseract with its Korean and English data.
command -v tesseract >/dev/null 2>&1 || need_apt+=(tesseract-ocr)
[ -f /usr/share/tesseract-ocr/5/tessdata/kor.traineddata ] || need_apt+=(tesseract-ocr-kor)
[ -f /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || need_apt+=(tesseract-ocr-eng)
# Korean glyphs in the browser tests' screenshots.
[ -d /usr/share/fonts/opentype/noto ] || need_apt+=(fonts-noto-cjk)
# Native PostgreSQL with pgvector (scripts/pgvector.sh builds pgvector against Debian's server headers).
pg_major=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)
[ -n "$pg_major" ] || { pg_major=15; need_apt+=(postgresql); }
[ -d "/usr/include/postgresql/$pg_major/server" ] || need_apt+=("postgresql-server-dev-$pg_major")
command -v make >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 || need_apt+=(build-essential)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

# --- Go tools --------------------------------------------------------------------------------------------
# The module version (v0.8.2) is the release staticcheck calls 2026.2.2; the proxy knows only the former.
STATICCHECK_VERSION=0.8.2
if ! staticcheck -version 2>/dev/null | grep -q "($STATICCHECK_VERSION)"; then
  log "go install staticcheck@v$STATICCHECK_VERSION"
  go install "honnef.co/go/tools/cmd/staticcheck@v$STATICCHECK_VERSION"
fi

# --- static checks ---------------------------------------------------------------------------------------
log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi
log "go vet"
go vet ./...
log "staticcheck"
staticcheck ./...
# The offline build (no hosted model SDK) keeps compiling and passes vet.
log "go vet -tags ragd_offline"
go vet -tags ragd_offline ./cmd/... ./internal/app/...
[ "${1:-}" = "lint" ] && exit 0

# --- tests -----------------------------------------------------------------------------------------------
# The official openai and MCP npm clients that test/openai and test/mcp run against the binary (their Go
# tests also install them).
if [ ! -f test/openai/node_modules/openai/package.json ]; then
  log "npm ci (test/openai)"
  (cd test/openai && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -f test/mcp/node_modules/@modelcontextprotocol/sdk/package.json ]; then
  log "npm ci (test/mcp)"
  (cd test/mcp && npm ci --no-audit --no-fund --loglevel=error)
fi

# PostgreSQL + pgvector for the PostgreSQL store's tests: PGlite (real PostgreSQL in WebAssembly) on loopback.
log "PGlite"
export RAGD_TEST_DATABASE_URL="$(scripts/pglite.sh start)"
trap 'scripts/pglite.sh stop' EXIT
echo "$RAGD_TEST_DATABASE_URL"

export RAGD_TEST_OUT="${RAGD_TEST_OUT:-$root/testdata/out}"
log "go test"
# RAGD_TEST_NATIVE_LATER: the PostgreSQL tests of many minutes on PGlite wait for the native stage below.
RAGD_TEST_NATIVE_LATER=1 go test -count=1 -timeout 80m ./...

# The race detector over the short suite (-short leaves out the multi-minute quality and scale runs; the
# jobs tests skip their PDF-heavy cases under -race, see internal/jobs/race_test.go).
log "go test -tags ragd_offline (internal/app)"
go test -count=1 -tags ragd_offline -run 'TestProviders' ./internal/app/

# Every fuzz target on fresh inputs for a bounded time (the long runs are scripts/fuzz.sh 10m).
log "fuzz (10s per target)"
scripts/fuzz.sh 10s

log "go test -race -short"
go test -race -short -count=1 -timeout 40m ./...

# The PostgreSQL store's tests again on a native server (PostgreSQL $pg_major + pgvector, built from source):
# the COPY bulk path, real parallel sessions and pgvector's native HNSW, which PGlite cannot show.
log "PostgreSQL $pg_major + pgvector (native)"
native_url="$(scripts/pgvector.sh start)"
trap 'scripts/pglite.sh stop; scripts/pgvector.sh stop' EXIT
echo "$native_url"
# The SQLite halves of tests that run on both stores already ran above.
RAGD_TEST_DATABASE_URL="$native_url" RAGD_TEST_REQUIRE_COPY=1 go test -count=1 -timeout 40m -skip '/SQLite$' \
  ./internal/store/postgres/ ./internal/jobs/ ./internal/reembed/ ./internal/app/ ./test/scale/
