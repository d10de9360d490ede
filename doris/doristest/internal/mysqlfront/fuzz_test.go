package mysqlfront

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// FuzzMySQLFrontPackets feeds arbitrary client bytes to one connection of
// the MySQL front (an in-memory net.Pipe, through serveConn: guard,
// handshake, command loop, session) and fails on any panic serveConn
// recovers: the recover is a safety net, a panic is still a bug.
//
// Input: a flags byte, then the stream. Flag 1 logs in first (root, empty
// password). Flag 2 reads the stream as packets, each a little-endian
// uint16 length and a payload (cut at the end of the input), sent as
// commands with sequence number 0 (the first as the handshake response,
// sequence 1, without flag 1); without it the stream is sent raw. The seeds
// (testdata/fuzz/FuzzMySQLFrontPackets and below) are the three packets of
// issue 10.
//
// CI runs it for a bounded time:
//
//	go test -run '^$' -fuzz '^FuzzMySQLFrontPackets$' -fuzztime 20s ./doris/doristest/internal/mysqlfront
func FuzzMySQLFrontPackets(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	for _, s := range fuzzCommandSeeds() {
		f.Add(s)
	}
	fb := newFakeBackend()
	fb.users["alice"] = "s3cret"
	fb.dbs["demo"] = map[string]*fakeTable{}
	s := New(pwBackend{fb}, WithQueryTimeout(200*time.Millisecond))
	var recovered string
	s.onPanic = func(r any, stack []byte) { recovered = fmt.Sprintf("%v\n%s", r, stack) }
	f.Cleanup(func() { _ = s.Close() })

	f.Fuzz(func(t *testing.T, in []byte) {
		recovered = ""
		client, server := net.Pipe()
		s.mu.Lock()
		s.conns[server] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.serveConn(server)
		}()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_, _ = client.Write(fuzzStream(in))
		_ = client.Close()
		<-done
		if recovered != "" {
			t.Fatalf("serveConn recovered a panic:\n%s", recovered)
		}
	})
}

// fuzzStream turns a fuzz input into the client's bytes (see
// FuzzMySQLFrontPackets).
func fuzzStream(in []byte) []byte {
	if len(in) == 0 {
		return nil
	}
	flags, rest := in[0], in[1:]
	var out []byte
	if flags&1 != 0 {
		out = append(out, rawLogin()...)
	}
	if flags&2 == 0 {
		return append(out, rest...)
	}
	first := flags&1 == 0
	for len(rest) > 0 {
		n := 0
		if len(rest) >= 2 {
			n = int(binary.LittleEndian.Uint16(rest))
			rest = rest[2:]
		} else {
			rest = rest[1:]
		}
		n = min(n, len(rest))
		seq := byte(0)
		if first {
			seq, first = 1, false
		}
		out = append(out, frame(seq, rest[:n])...)
		rest = rest[n:]
	}
	return out
}

// fuzzSeeds are the three crashes of issue 10 in FuzzMySQLFrontPackets's
// input format (also in testdata/fuzz/FuzzMySQLFrontPackets).
func fuzzSeeds() [][]byte {
	packets := func(ps ...[]byte) []byte {
		var out []byte
		for _, p := range ps {
			out = binary.LittleEndian.AppendUint16(out, uint16(len(p)))
			out = append(out, p...)
		}
		return out
	}
	wrongPassword := append([]byte{0}, frame(1, rawHandshake("root", []byte("0123456789abcdefghij"), 0, nil))...)
	emptyCommand := []byte{1, 0, 0, 0, 0}
	hugeString := append([]byte{3}, packets(rawPrepare("SELECT ?"), rawExecuteHugeString())...)
	return [][]byte{wrongPassword, emptyCommand, hugeString}
}

// fuzzCommandSeeds are well-formed sessions (login, then framed commands)
// for the fuzzer to start from: DDL, SHOW, SELECT on the engine, a
// prepared statement with parameters, COM_FIELD_LIST, COM_INIT_DB.
func fuzzCommandSeeds() [][]byte {
	session := func(cmds ...[]byte) []byte {
		out := []byte{3}
		for _, c := range cmds {
			out = binary.LittleEndian.AppendUint16(out, uint16(len(c)))
			out = append(out, c...)
		}
		return out
	}
	q := func(s string) []byte { return append([]byte{mysql.COM_QUERY}, s...) }
	exec := []byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		mysql.MYSQL_TYPE_LONGLONG, 0, mysql.MYSQL_TYPE_VAR_STRING, 0}
	exec = binary.LittleEndian.AppendUint64(exec, 7)
	exec = append(exec, 3, 'a', 'b', 'c')
	return [][]byte{
		session(q("CREATE TABLE demo.t (k BIGINT, v VARCHAR(8)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"),
			q("SELECT k, v FROM demo.t WHERE v LIKE 'a%' ORDER BY k LIMIT 3"), q("SHOW CREATE TABLE demo.t"),
			q("DESC demo.t"), q("SHOW TRANSACTION FROM demo WHERE label = 'x'")),
		session(rawPrepare("SELECT ? + 1, ? FROM (SELECT 1) AS t"), exec, []byte{mysql.COM_STMT_CLOSE, 1, 0, 0, 0}),
		session(q("CREATE TABLE demo.i (k BIGINT, v VARCHAR(8)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"),
			q("INSERT INTO demo.i VALUES (1, 'a'), (-2, NULL), (3.5, 'c')"), q("INSERT INTO demo.i (k, v) SELECT 4, 'd'"),
			q("BEGIN"), q("INSERT INTO demo.i (v, k) VALUE ('e', 5)"), q("INSERT INTO demo.i VALUES (1,,2)"), q("COMMIT"),
			q("START TRANSACTION"), q("INSERT INTO demo.i VALUES ()"), q("ROLLBACK"),
			q("INSERT INTO demo.i (k, __DORIS_DELETE_SIGN__) VALUES (1, 1)")),
		session([]byte{mysql.COM_INIT_DB, 'd', 'e', 'm', 'o'}, append([]byte{mysql.COM_FIELD_LIST}, "t\x00"...),
			q("SET @@session.query_timeout = 5, names utf8"), q("SELECT @@version_comment, DATABASE(), 1 LIMIT 1"),
			q("ADMIN SHOW FRONTEND CONFIG LIKE '%label%'"), []byte{mysql.COM_PING}, []byte{mysql.COM_QUIT}),
	}
}
