// Serves an in-memory PGlite (PostgreSQL in WebAssembly) with the pgvector extension over the Postgres wire
// protocol on 127.0.0.1, for ragd's PostgreSQL tests.
//
// PGlite is one backend, one session. Every client connection is multiplexed onto it here, a whole protocol
// exchange at a time: a simple Query, or an extended-protocol group up to its Sync (Parse/Bind/Describe/
// Execute share the unnamed statement and portal, so two connections' groups must never interleave — they do
// in @electric-sql/pglite-socket 0.2.17, which forwards message by message, and pgx then fails with "unnamed
// prepared statement does not exist"). While a connection has a transaction open, only it is served.
// Session state is still shared: clients must use SET LOCAL only and no named prepared statements (pgx:
// default_query_exec_mode=cache_describe). COPY is not supported.
//
// Usage: node server.mjs [--port 5499] [--host 127.0.0.1] [--data DIR]
import net from 'node:net'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def
}

const port = Number(arg('port', process.env.PGLITE_PORT || '5499'))
const host = arg('host', '127.0.0.1')
const dataDir = arg('data', '') // empty: in memory
const debug = process.env.PGLITE_DEBUG === '1'

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102

const db = await PGlite.create({ dataDir: dataDir || undefined, extensions: { vector } })

// units waiting to run: { conn, messages: Uint8Array[] }
const queue = []
let running = false
let owner = null // the connection whose transaction is open
let nextID = 1

// rollback ends the open transaction of a connection that went away. db.exec takes PGlite's query lock
// itself: called inside db.runExclusive (the same lock) it would wait for itself forever, and with it every
// connection (a killed client's transaction hung the test suite that way, one run in ten).
async function rollback() {
  await db.exec('ROLLBACK').catch((err) => console.error('pglite: rollback:', err))
}

async function pump() {
  if (running) return
  running = true
  try {
    while (queue.length > 0) {
      let i = 0
      if (owner !== null && db.isInTransaction()) {
        i = queue.findIndex((u) => u.conn === owner)
        if (i < 0) break // the transaction's owner has nothing queued yet: wait for it
      }
      const unit = queue.splice(i, 1)[0]
      if (unit.conn.closed) continue
      await db.runExclusive(async () => {
        for (const m of unit.messages) {
          await db.execProtocolRawStream(m, {
            onRawData: (data) => {
              if (!unit.conn.closed && data.length > 0) unit.conn.socket.write(Buffer.from(data))
            },
          })
        }
      })
      owner = db.isInTransaction() ? unit.conn : null
      if (owner !== null && unit.conn.closed) {
        // The client went away while its unit ran, before that unit opened the transaction: close() saw no
        // transaction to end, so end it here, or every other connection would wait for it forever.
        await rollback()
        owner = null
      }
      if (debug) console.log(`conn ${unit.conn.id}: ${unit.messages.length} messages, in transaction: ${owner !== null}`)
    }
  } catch (err) {
    console.error('pglite:', err)
  } finally {
    running = false
  }
}

function serve(socket) {
  const conn = { id: nextID++, socket, closed: false, started: false, buf: Buffer.alloc(0), pending: [] }
  socket.setNoDelay(true)
  const close = async () => {
    if (conn.closed) return
    conn.closed = true
    for (let i = queue.length - 1; i >= 0; i--) if (queue[i].conn === conn) queue.splice(i, 1)
    if (owner === conn) {
      // A client that went away inside a transaction must not leave it open for everyone else.
      await rollback()
      owner = null
    }
    socket.destroy()
    pump()
  }
  socket.on('error', close)
  socket.on('close', close)
  socket.on('data', (chunk) => {
    conn.buf = Buffer.concat([conn.buf, chunk])
    for (;;) {
      if (!conn.started) {
        if (conn.buf.length < 8) return
        const len = conn.buf.readInt32BE(0)
        if (conn.buf.length < len) return
        const code = conn.buf.readInt32BE(4)
        const msg = conn.buf.subarray(0, len)
        conn.buf = conn.buf.subarray(len)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write('N')
          continue
        }
        if (code === CANCEL_REQUEST) {
          close()
          return
        }
        conn.started = true
        queue.push({ conn, messages: [new Uint8Array(msg)] })
        pump()
        continue
      }
      if (conn.buf.length < 5) return
      const type = String.fromCharCode(conn.buf[0])
      const len = 1 + conn.buf.readInt32BE(1)
      if (conn.buf.length < len) return
      const msg = new Uint8Array(conn.buf.subarray(0, len))
      conn.buf = conn.buf.subarray(len)
      if (type === 'X') {
        close()
        return
      }
      conn.pending.push(msg)
      // A simple query, a Sync (end of an extended-protocol group) or a Flush ends a unit.
      if (type === 'Q' || type === 'S' || type === 'H') {
        queue.push({ conn, messages: conn.pending })
        conn.pending = []
        pump()
      }
    }
  })
}

const server = net.createServer(serve)
server.listen(port, host, async () => {
  const v = await db.query("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
  console.log(`pglite listening on ${host}:${port} (pgvector ${v.rows[0]?.default_version ?? 'missing'})`)
})

async function shutdown() {
  server.close()
  await db.close()
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
