package mysqlfront

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// A raw MySQL client for the tests that send packets no driver would.

// Capabilities of rawHandshake: protocol 4.1, length-prefixed auth data,
// plugin auth, transactions.
const rawCaps = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION |
	mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_TRANSACTIONS

// frame returns payload as one packet with sequence number seq.
func frame(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// rawHandshake is a HandshakeResponse41 for user with the given auth data
// (mysql_native_password); caps are added to rawCaps and extra is appended
// after the plugin name (e.g. connection attributes).
func rawHandshake(user string, auth []byte, caps uint32, extra []byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, rawCaps|caps)
	p = binary.LittleEndian.AppendUint32(p, 0) // max packet size
	p = append(p, mysql.DEFAULT_COLLATION_ID)
	p = append(p, make([]byte, 23)...)
	p = append(p, user...)
	p = append(p, 0, byte(len(auth)))
	p = append(p, auth...)
	p = append(p, mysql.AUTH_NATIVE_PASSWORD...)
	p = append(p, 0)
	return append(p, extra...)
}

// rawLogin is the handshake response of root with an empty password.
func rawLogin() []byte { return frame(1, rawHandshake("root", nil, 0, nil)) }

// rawPrepare is COM_STMT_PREPARE of q.
func rawPrepare(q string) []byte { return append([]byte{mysql.COM_STMT_PREPARE}, q...) }

// rawExecuteHugeString is COM_STMT_EXECUTE of statement 1 with one
// VAR_STRING parameter whose length is 0x7fffffffffffffff (go-mysql
// v1.16.0: slice bounds out of range in LengthEncodedString).
func rawExecuteHugeString() []byte {
	p := []byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0}
	p = append(p, 0, 1, mysql.MYSQL_TYPE_VAR_STRING, 0) // null bitmap, new params bound, type
	return append(p, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
}

// rawConn is a client connection speaking packets.
type rawConn struct {
	t *testing.T
	c net.Conn
}

// dialRaw connects to addr and reads the server's greeting.
func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rc := &rawConn{t: t, c: c}
	if _, p := rc.read(); len(p) == 0 || p[0] != 10 {
		t.Fatalf("greeting %x: not a protocol 10 handshake", p)
	}
	return rc
}

func (rc *rawConn) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// read returns the next packet.
func (rc *rawConn) read() (byte, []byte) {
	rc.t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(rc.c, hdr[:]); err != nil {
		rc.t.Fatalf("read header: %v", err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(rc.c, p); err != nil {
		rc.t.Fatalf("read payload: %v", err)
	}
	return hdr[3], p
}

// login sends rawLogin and expects OK.
func (rc *rawConn) login() {
	rc.t.Helper()
	rc.write(rawLogin())
	if _, p := rc.read(); len(p) == 0 || p[0] != mysql.OK_HEADER {
		rc.t.Fatalf("login answer %q, want OK", p)
	}
}

// readErr reads an ERR packet and returns its code and message.
func (rc *rawConn) readErr() (uint16, string) {
	rc.t.Helper()
	_, p := rc.read()
	if len(p) < 9 || p[0] != mysql.ERR_HEADER {
		rc.t.Fatalf("answer %q, want an ERR packet", p)
	}
	return binary.LittleEndian.Uint16(p[1:3]), string(p[9:])
}

// readUntilEOF reads packets up to and including an EOF packet.
func (rc *rawConn) readUntilEOF() {
	rc.t.Helper()
	for {
		_, p := rc.read()
		if len(p) > 0 && p[0] == mysql.ERR_HEADER {
			rc.t.Fatalf("ERR %q while reading a result", p)
		}
		if len(p) > 0 && p[0] == mysql.EOF_HEADER && len(p) < 9 {
			return
		}
	}
}

// expectClosed checks that the server closed the connection.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard, not a timing assertion
	var b [1]byte
	if n, err := rc.c.Read(b[:]); !errors.Is(err, io.EOF) {
		rc.t.Fatalf("read after refusal: %d bytes, %v; want EOF", n, err)
	}
}

// startGuarded is startFront with a panic hook that fails the test: the
// crashes of issue 10 must be refused by the guard, not recovered.
func startGuarded(t *testing.T, b Backend, opts ...Option) (*Server, string, *panicLog) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(b, opts...)
	pl := &panicLog{}
	s.onPanic = pl.add
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, l.Addr().String(), pl
}

// panicLog records the panics serveConn recovered.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (pl *panicLog) add(r any, stack []byte) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.panics = append(pl.panics, fmt.Sprint(r)+"\n"+string(stack))
}

func (pl *panicLog) list() []string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return append([]string(nil), pl.panics...)
}
