package mysqlfront

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"
)

// The three packets of issue 10 that crashed the process through go-mysql
// v1.16.0. Each is sent over TCP; the connection gets an answer (or is
// closed), nothing panics, and the server keeps serving.

func TestIssue10_WrongPasswordForEmptyPasswordUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    Backend
	}{
		{"PasswordLookup", pwBackend{newFakeBackend()}},
		{"CheckPasswordOnly", newFakeBackend()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, addr, pl := startGuarded(t, tc.b)
			rc := dialRaw(t, addr)
			// root's stored password is empty; a 20-byte scramble made
			// go-mysql decode an empty hash (DecodePasswordHex: index out of range).
			rc.write(frame(1, rawHandshake("root", bytes.Repeat([]byte{0x41}, 20), 0, nil)))
			code, msg := rc.readErr()
			if code != mysql.ER_ACCESS_DENIED_ERROR || msg != "Access denied for user 'root@127.0.0.1' (using password: YES)" {
				t.Errorf("answer %d %q, want Doris's access denied", code, msg)
			}
			assertServing(t, addr, pl)
		})
	}
}

func TestIssue10_EmptyCommandPacket(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()})
	rc := dialRaw(t, addr)
	rc.login()
	rc.write(frame(0, nil)) // go-mysql: data[0] on an empty packet
	if code, msg := rc.readErr(); code != mysql.ER_MALFORMED_PACKET || msg != malformed {
		t.Errorf("answer %d %q, want %d %q", code, msg, mysql.ER_MALFORMED_PACKET, malformed)
	}
	rc.expectClosed()
	assertServing(t, addr, pl)
}

func TestIssue10_StmtExecuteHugeStringLength(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()})
	rc := dialRaw(t, addr)
	rc.login()
	rc.write(frame(0, rawPrepare("SELECT ?")))
	if _, p := rc.read(); len(p) < 12 || p[0] != mysql.OK_HEADER || p[1] != 1 {
		t.Fatalf("prepare answer %x, want OK for statement 1", p)
	}
	rc.readUntilEOF() // the parameter definition
	rc.write(frame(0, rawExecuteHugeString()))
	if code, _ := rc.readErr(); code != mysql.ER_MALFORMED_PACKET {
		t.Errorf("answer %d, want %d", code, mysql.ER_MALFORMED_PACKET)
	}
	rc.expectClosed()
	assertServing(t, addr, pl)
}

// A well-formed execute on the same statement still works (the guard reads
// the parameter count from the server's COM_STMT_PREPARE_OK).
func TestGuard_WellFormedExecutePasses(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()})
	db := openDB(t, "root", "", addr, "/?interpolateParams=false")
	var s string
	if err := db.QueryRow("SELECT ?", "it's").Scan(&s); err != nil || s != "it's" {
		t.Fatalf("SELECT ? = %q, %v", s, err)
	}
	if p := pl.list(); len(p) != 0 {
		t.Fatalf("recovered panics: %v", p)
	}
}

func TestGuard_RefusesOversizedPacket(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()})
	rc := dialRaw(t, addr)
	rc.login()
	// A frame of maximal length announces a continuation: two of them are
	// over the limit before any payload is buffered past it.
	big := make([]byte, maxFrame)
	big[0] = mysql.COM_QUERY
	rc.write(frame(0, big)[:4+maxFrame])
	hdr := []byte{0xff, 0xff, 0xff, 1}
	go func() { _, _ = rc.c.Write(hdr) }()
	if code, _ := rc.readErr(); code != mysql.ER_NET_PACKET_TOO_LARGE {
		t.Errorf("answer %d, want %d", code, mysql.ER_NET_PACKET_TOO_LARGE)
	}
	assertServing(t, addr, pl)
}

func TestGuard_RefusesBadConnectionAttributes(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()})
	for name, attrs := range map[string][]byte{
		"truncated length":  {0xfc, 0x01},
		"overflowing total": {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x01, 'a'},
		"overflowing key":   {0x0a, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00},
	} {
		rc := dialRaw(t, addr)
		rc.write(frame(1, rawHandshake("root", nil, mysql.CLIENT_CONNECT_ATTRS, attrs)))
		if code, _ := rc.readErr(); code != mysql.ER_MALFORMED_PACKET {
			t.Errorf("%s: answer %d, want %d", name, code, mysql.ER_MALFORMED_PACKET)
		}
	}
	assertServing(t, addr, pl)
}

// A panic the guard does not know about (here: in the Backend) closes that
// connection only; it is logged with its stack.
func TestRecoverClosesOnlyThatConnection(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	f := newFakeBackend()
	_, addr, pl := startGuarded(t, panicky{f}, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := context.Background()
	c := conn(t, addr, "")
	if _, err := c.ExecContext(ctx, "USE boom"); !errors.Is(err, gomysql.ErrInvalidConn) && !errors.Is(err, sql.ErrConnDone) {
		t.Errorf("USE after a panic: %v, want a closed connection", err)
	}
	if p := pl.list(); len(p) != 1 || !strings.Contains(p[0], "backend exploded") {
		t.Fatalf("recovered panics %q, want one", p)
	}
	if !strings.Contains(logs.String(), "panic while serving a connection") || !strings.Contains(logs.String(), "backend exploded") {
		t.Errorf("log %q does not report the panic", logs.String())
	}
	if err := openDB(t, "root", "", addr, "/").Ping(); err != nil {
		t.Fatalf("new connection after a panic: %v", err)
	}
}

// panicky panics on Databases (USE calls it).
type panicky struct{ *fakeBackend }

func (panicky) Databases() []string { panic("backend exploded") }

// assertServing checks that a new connection logs in and that nothing
// was recovered from a panic.
func assertServing(t *testing.T, addr string, pl *panicLog) {
	t.Helper()
	if err := openDB(t, "root", "", addr, "/").Ping(); err != nil {
		t.Fatalf("server no longer serves: %v", err)
	}
	if p := pl.list(); len(p) != 0 {
		t.Fatalf("recovered panics (the guard should have refused the packet): %v", p)
	}
}

func TestLenenc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []byte
		n    int
		okay bool
	}{
		{[]byte{0x00}, 1, true},
		{[]byte{0x02, 'a', 'b'}, 3, true},
		{[]byte{0x02, 'a'}, 0, false},
		{[]byte{0xfb}, 1, true},
		{[]byte{0xfc, 0x01}, 0, false},
		{[]byte{0xfc, 0x01, 0x00, 'x'}, 4, true},
		{[]byte{0xfd, 0, 0, 0}, 4, true},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0, false},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'x'}, 0, false},
		{nil, 0, false},
	} {
		n, ok := lenencString(tc.in)
		if n != tc.n || ok != tc.okay {
			t.Errorf("lenencString(%x) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.okay)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
