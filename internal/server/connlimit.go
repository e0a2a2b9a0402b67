package server

import (
	"net"
	"strconv"
	"sync"
	"time"
)

// overloadBody is what a connection over the limit gets before it is closed: the documented
// rate_limited error, written raw because no http.Server goroutine is spent on it.
const overloadBody = `{"error":"rate_limited","message":"too many open connections (RAGD_MAX_CONNECTIONS)"}`

var overloadResponse = "HTTP/1.1 429 Too Many Requests\r\n" +
	"Content-Type: application/json\r\n" +
	"Retry-After: 1\r\n" +
	"Connection: close\r\n" +
	"Content-Length: " + strconv.Itoa(len(overloadBody)) + "\r\n" +
	"\r\n" + overloadBody

// LimitListener returns a listener that keeps at most max connections open at once. A connection accepted
// beyond that gets 429 rate_limited with Retry-After and is closed at once, so that a flood of connections
// (slow bodies, idle keep-alives) cannot exhaust the process's file descriptors and take /healthz down with
// them, and a client over the limit hears why instead of waiting in the kernel's backlog. max < 1 means no
// limit.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max < 1 {
		return ln
	}
	return &limitListener{Listener: ln, max: max}
}

type limitListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		ok := l.open < l.max
		if ok {
			l.open++
		}
		l.mu.Unlock()
		if ok {
			return &limitConn{Conn: c, release: l.release}, nil
		}
		go refuse(c)
	}
}

func (l *limitListener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// refuse writes the overload response and closes c, bounded in time so that a client that never reads
// cannot hold the descriptor.
func refuse(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write([]byte(overloadResponse))
	c.Close()
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
