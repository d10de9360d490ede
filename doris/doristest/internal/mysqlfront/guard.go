package mysqlfront

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// go-mysql v1.16.0 (the newest version the module proxy serves here) indexes
// client packets without bounds checks in a few places, so a crafted packet
// panics the goroutine serving it, and with it the process:
//   - an empty command packet (server/command.go dispatch: data[0]);
//   - a length-encoded string or integer that runs past the packet, or whose
//     length overflows int (mysql/util.go LengthEncodedInt and
//     LengthEncodedString), in COM_STMT_EXECUTE parameters
//     (server/stmt.go bindStmtArgs) and in the connection attributes of the
//     handshake response (server/handshake_resp.go readAttributes);
//   - unbounded packets: ReadPacket allocates what the header announces and
//     concatenates 16 MiB frames without limit.
//
// guardConn sits between the socket and go-mysql. It reads each client
// packet whole, checks the fields go-mysql would index blindly, and refuses a
// bad packet before go-mysql sees it: it answers an ERR packet itself and
// fails the read, so go-mysql closes the connection. Everything else passes
// through unchanged (go-mysql answers its own, graceful errors). serveConn's
// recover stays the safety net for what the guard does not know.

const (
	// maxPacketSize bounds one client packet (all its frames). Doris's
	// max_allowed_packet session variable defaults to 16 MiB (fe
	// SessionVariable.java); the emulator enforces it to bound memory.
	maxPacketSize = 16 << 20
	// maxLongData bounds the COM_STMT_SEND_LONG_DATA bytes of a connection
	// (go-mysql keeps appending them to the statement's arguments).
	maxLongData = maxPacketSize
	// maxStmts bounds the prepared statements open on one connection.
	maxStmts = 1024

	maxFrame = 1<<24 - 1 // a frame of this length is continued by the next
)

// guardConn is the per-connection packet guard. go-mysql reads and writes a
// connection from one goroutine, so only commands is shared (set by
// serveConn after the handshake, read by Read).
type guardConn struct {
	net.Conn
	log *slog.Logger

	commands  atomic.Bool // the handshake is over: every packet is a command
	handshake bool        // the handshake response has been checked

	pending []byte // checked bytes go-mysql has not read yet
	err     error  // sticky read error

	stmts        map[uint32]int // statement id → parameter count (COM_STMT_PREPARE_OK)
	awaitPrepare bool           // the last command was COM_STMT_PREPARE
	wbuf         []byte         // start of the server's answer to it
	longData     int            // COM_STMT_SEND_LONG_DATA bytes so far
}

func newGuardConn(c net.Conn, log *slog.Logger) *guardConn {
	return &guardConn{Conn: c, log: log, stmts: make(map[uint32]int)}
}

// Read hands go-mysql the bytes of checked packets only.
func (g *guardConn) Read(p []byte) (int, error) {
	if len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		raw, err := g.next()
		if err != nil {
			g.err = err
			return 0, err
		}
		g.pending = raw
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// Write passes the server's bytes through, reading the statement id and
// parameter count out of a COM_STMT_PREPARE_OK.
func (g *guardConn) Write(b []byte) (int, error) {
	if g.awaitPrepare {
		g.observePrepare(b)
	}
	return g.Conn.Write(b)
}

// errRefused is the read error after the guard refused a packet.
type errRefused struct{ reason string }

func (e errRefused) Error() string { return "refused client packet: " + e.reason }

// next reads one packet (every frame of it), checks it and returns its raw
// bytes, headers included.
func (g *guardConn) next() ([]byte, error) {
	var raw bytes.Buffer
	var hdr [4]byte
	var seq byte
	var frames [][]byte
	size := 0
	for i := 0; ; i++ {
		if _, err := io.ReadFull(g.Conn, hdr[:]); err != nil {
			return nil, err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		seq = hdr[3]
		if size+n > maxPacketSize {
			return nil, g.refuse(seq, mysql.ER_NET_PACKET_TOO_LARGE,
				"Got a packet bigger than 'max_allowed_packet' bytes", fmt.Sprintf("packet over %d bytes", maxPacketSize))
		}
		start := raw.Len()
		raw.Write(hdr[:])
		if _, err := io.CopyN(&raw, g.Conn, int64(n)); err != nil {
			return nil, err
		}
		frames = append(frames, raw.Bytes()[start+4:start+4+n])
		size += n
		if n < maxFrame {
			break
		}
	}
	payload := frames[0]
	if len(frames) > 1 {
		payload = bytes.Join(frames, nil)
	}
	if code, msg, reason := g.check(payload); reason != "" {
		return nil, g.refuse(seq, code, msg, reason)
	}
	return raw.Bytes(), nil
}

// refuse answers an ERR packet (after the client's last sequence number),
// logs the reason and returns the read error.
func (g *guardConn) refuse(seq byte, code uint16, msg, reason string) error {
	remote := ""
	if a := g.RemoteAddr(); a != nil {
		remote = a.String()
	}
	g.log.Warn("doristest mysql: refused a malformed client packet; closing the connection",
		"remote", remote, "reason", reason)
	e := mysql.NewError(code, msg)
	pkt := []byte{0, 0, 0, seq + 1, mysql.ERR_HEADER, byte(code), byte(code >> 8), '#'}
	pkt = append(pkt, e.State...)
	pkt = append(pkt, msg...)
	n := len(pkt) - 4
	pkt[0], pkt[1], pkt[2] = byte(n), byte(n>>8), byte(n>>16)
	_, _ = g.Conn.Write(pkt)
	return errRefused{reason: reason}
}

const malformed = "Malformed communication packet."

// check returns a non-empty reason (with the MySQL error to answer) when
// payload would crash go-mysql or exceeds a bound.
func (g *guardConn) check(p []byte) (code uint16, msg, reason string) {
	if !g.commands.Load() {
		if g.handshake {
			return 0, "", "" // auth switch responses: opaque auth data
		}
		g.handshake = true
		if r := checkHandshakeResponse(p); r != "" {
			return mysql.ER_MALFORMED_PACKET, malformed, r
		}
		return 0, "", ""
	}
	if len(p) == 0 {
		return mysql.ER_MALFORMED_PACKET, malformed, "empty command packet"
	}
	switch p[0] {
	case mysql.COM_STMT_PREPARE:
		if len(g.stmts) >= maxStmts {
			return mysql.ER_MAX_PREPARED_STMT_COUNT_REACHED,
				fmt.Sprintf("Can't create more than max_prepared_stmt_count statements (current value: %d)", maxStmts),
				"too many prepared statements"
		}
		g.awaitPrepare = true
	case mysql.COM_STMT_EXECUTE:
		if r := g.checkExecute(p[1:]); r != "" {
			return mysql.ER_MALFORMED_PACKET, malformed, r
		}
	case mysql.COM_STMT_CLOSE:
		if len(p) >= 5 {
			delete(g.stmts, binary.LittleEndian.Uint32(p[1:5]))
		}
	case mysql.COM_STMT_SEND_LONG_DATA:
		g.longData += len(p)
		if g.longData > maxLongData {
			return mysql.ER_NET_PACKET_TOO_LARGE, "Got a packet bigger than 'max_allowed_packet' bytes",
				"COM_STMT_SEND_LONG_DATA over the connection's limit"
		}
	}
	return 0, "", ""
}

// observePrepare records the id and parameter count of a
// COM_STMT_PREPARE_OK (0x00, id u32, columns u16, params u16, ...); an ERR
// answer ends the wait.
func (g *guardConn) observePrepare(b []byte) {
	g.wbuf = append(g.wbuf, b...)
	if len(g.wbuf) < 5 {
		return
	}
	n := int(g.wbuf[0]) | int(g.wbuf[1])<<8 | int(g.wbuf[2])<<16
	p := g.wbuf[4:]
	if p[0] == 0x00 && n >= 9 {
		if len(p) < 9 {
			return
		}
		g.stmts[binary.LittleEndian.Uint32(p[1:5])] = int(binary.LittleEndian.Uint16(p[7:9]))
	}
	g.awaitPrepare = false
	g.wbuf = g.wbuf[:0]
}

// checkExecute follows server/stmt.go handleStmtExecute and bindStmtArgs:
// where go-mysql fails gracefully it is left to do so; only what it would
// index out of bounds is refused.
func (g *guardConn) checkExecute(data []byte) string {
	if len(data) < 9 {
		return ""
	}
	params, ok := g.stmts[binary.LittleEndian.Uint32(data[0:4])]
	if !ok || params == 0 {
		return ""
	}
	if flag := data[4]; flag>>4 != 0 ||
		flag&(mysql.CURSOR_TYPE_READ_ONLY|mysql.CURSOR_TYPE_FOR_UPDATE|mysql.CURSOR_TYPE_SCROLLABLE) != 0 {
		return ""
	}
	pos := 9
	nb := (params + 7) >> 3
	if len(data) < pos+nb+1 {
		return ""
	}
	nulls := data[pos : pos+nb]
	pos += nb
	if data[pos] != 1 {
		return ""
	}
	pos++
	if len(data) < pos+params*2 {
		return ""
	}
	types := data[pos : pos+params*2]
	return checkParamValues(params, nulls, types, data[pos+params*2:])
}

func checkParamValues(params int, nulls, types, vals []byte) string {
	pos := 0
	for i := range params {
		if nulls[i>>3]&(1<<(uint(i)%8)) != 0 {
			continue
		}
		size := 0
		switch tp := types[i*2]; tp {
		case mysql.MYSQL_TYPE_NULL:
			continue
		case mysql.MYSQL_TYPE_TINY:
			size = 1
		case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
			size = 2
		case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_FLOAT:
			size = 4
		case mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_DOUBLE:
			size = 8
		case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BIT,
			mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB,
			mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
			mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_VECTOR,
			mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE,
			mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIME:
			if len(vals) < pos+1 {
				return "" // go-mysql: ErrMalformPacket
			}
			n, ok := lenencString(vals[pos:])
			if !ok {
				return fmt.Sprintf("COM_STMT_EXECUTE parameter %d: length-encoded value runs past the packet", i+1)
			}
			pos += n
			continue
		default:
			return "" // go-mysql: unknown field type
		}
		if len(vals) < pos+size {
			return ""
		}
		pos += size
	}
	return ""
}

// checkHandshakeResponse follows server/handshake_resp.go: it walks the
// fields go-mysql reads and refuses connection attributes it would read
// past the packet. Malformations go-mysql reports itself (or recovers from)
// are left to it.
func checkHandshakeResponse(p []byte) string {
	if len(p) <= 32 {
		return "" // go-mysql: handshake error or SSL request
	}
	caps := binary.LittleEndian.Uint32(p[0:4])
	if caps&mysql.CLIENT_PROTOCOL_41 == 0 || caps&mysql.CLIENT_SECURE_CONNECTION == 0 {
		return ""
	}
	pos := 32
	i := bytes.IndexByte(p[pos:], 0)
	if i < 0 {
		return ""
	}
	pos += i + 1
	if pos >= len(p) {
		return ""
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
		n, ok := lenencString(p[pos:])
		if !ok || p[pos] == 0xfb {
			return ""
		}
		pos += n
	} else {
		l := int(p[pos])
		pos++
		if pos+l > len(p) {
			return ""
		}
		pos += l
	}
	if caps&mysql.CLIENT_CONNECT_WITH_DB != 0 && pos < len(p) {
		i := bytes.IndexByte(p[pos:], 0)
		if i < 0 {
			return ""
		}
		pos += i + 1
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		i := bytes.IndexByte(p[pos:], 0)
		if i < 0 {
			return ""
		}
		pos += i + 1
	}
	if caps&mysql.CLIENT_CONNECT_ATTRS != 0 {
		return checkAttributes(p[pos:])
	}
	return ""
}

// checkAttributes checks the connection attributes: a length, then
// length-encoded strings up to the end of the packet (how go-mysql reads
// them).
func checkAttributes(b []byte) string {
	if len(b) == 0 || b[0] == 0xfb {
		return ""
	}
	total, n, ok := lenencInt(b)
	if !ok || total > uint64(len(b)-n) {
		return "connection attributes run past the packet"
	}
	rest := b[n:]
	for len(rest) > 0 && rest[0] != 0xfb {
		m, ok := lenencString(rest)
		if !ok {
			return "connection attribute runs past the packet"
		}
		rest = rest[m:]
	}
	return ""
}

// lenencInt reads a length-encoded integer; ok is false when b is too short.
// 0xfb (NULL) reads as 0 in one byte.
func lenencInt(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch b[0] {
	case 0xfb:
		return 0, 1, true
	case 0xfc:
		n = 3
	case 0xfd:
		n = 4
	case 0xfe:
		n = 9
	default:
		return uint64(b[0]), 1, true
	}
	if len(b) < n {
		return 0, 0, false
	}
	for i := n - 1; i >= 1; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, n, true
}

// lenencString returns the size of the length-encoded string at b (length
// and bytes); ok is false when it does not fit in b.
func lenencString(b []byte) (int, bool) {
	v, n, ok := lenencInt(b)
	if !ok || v > uint64(len(b)-n) {
		return 0, false
	}
	return n + int(v), true
}
