// Serves an in-memory PGlite (PostgreSQL in WebAssembly) with the pgvector extension over the Postgres wire
// protocol, for ragd's PostgreSQL tests. PGlite is one session: every client connection is multiplexed onto it
// (statements of an open transaction are kept together), so clients must use SET LOCAL only and no named
// prepared statements (pgx: default_query_exec_mode=cache_describe), and COPY is not supported.
//
// Usage: node server.mjs [--port 5499] [--host 127.0.0.1] [--data DIR] [--max-connections 16]
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def
}

const port = Number(arg('port', process.env.PGLITE_PORT || '5499'))
const host = arg('host', '127.0.0.1')
const dataDir = arg('data', '') // empty: in memory
const maxConnections = Number(arg('max-connections', '16'))

const db = await PGlite.create({ dataDir: dataDir || undefined, extensions: { vector } })
const server = new PGLiteSocketServer({ db, port, host, maxConnections })
await server.start()
const v = await db.query("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
console.log(`pglite listening on ${host}:${port} (pgvector ${v.rows[0]?.default_version ?? 'missing'})`)

async function shutdown() {
  await server.stop()
  await db.close()
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
