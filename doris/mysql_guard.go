package doris

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
)

// MySQLTLSMode is how the MySQL connection to the FE uses TLS
// (Config.MySQLTLS).
type MySQLTLSMode string

// MySQL TLS modes.
const (
	// MySQLTLSRequired: TLS verified with Config.TLS (the system roots when
	// nil); an FE that offers no TLS is refused.
	MySQLTLSRequired MySQLTLSMode = "required"
	// MySQLTLSPreferred: TLS when the FE offers it (fe.conf enable_ssl),
	// plaintext when it does not (a warning is logged once).
	MySQLTLSPreferred MySQLTLSMode = "preferred"
	// MySQLTLSOff: plaintext.
	MySQLTLSOff MySQLTLSMode = "off"
)

// ErrInsecureMySQLAuth matches the error of a MySQL connection the client
// broke off because the server, over plaintext, asked for the password in
// a form whoever answers on the FE's address can read: RSA-encrypted with
// a key the server itself sent (caching_sha2_password full authentication,
// sha256_password), or cleartext (mysql_clear_password, refused by the
// driver). Doris uses mysql_native_password, which never asks for either:
// such a server is not the FE, or the account needs TLS (LDAP). Set
// Config.MySQLTLS required (doris.mysql_tls) or, knowingly,
// Config.MySQLAllowInsecureAuth (doris.mysql_allow_insecure_auth).
var ErrInsecureMySQLAuth = errors.New("doris: mysql server asked for the password over a plaintext connection")

// MySQL protocol bytes (MySQL client/server protocol, connection phase).
const (
	mysqlClientSSL       = 0x00000800 // CLIENT_SSL capability
	mysqlSSLRequestLen   = 32         // SSLRequest payload
	mysqlOK              = 0x00
	mysqlERR             = 0xff
	mysqlAuthMoreData    = 0x01
	mysqlFastAuthSuccess = 0x03 // caching_sha2_password: cached, no password needed
)

// authGuard wraps the FE MySQL connection during the connection phase. Once
// the client starts TLS (its first packet is an SSLRequest) it only passes
// bytes through. On plaintext it reads the server's packets as they pass:
// an AuthMoreData that is not "fast auth success" (the server asks for the
// full password, or sends its RSA key for it) fails the read, before the
// driver could answer, unless insecure auth is allowed. After the server's
// OK or ERR it passes bytes through.
type authGuard struct {
	net.Conn
	addr   string
	allow  bool
	report func(tls, insecure bool, refused error)

	mu       sync.Mutex
	wrote    bool   // the client's first packet was seen
	tls      bool   // the client started TLS
	done     bool   // authentication ended (or TLS): pass through
	insecure bool   // an insecure step passed (allow)
	head     []byte // header + first payload bytes of the current packet
	left     int    // payload bytes of the current packet still to pass
	packets  int    // server packets seen
}

func (g *authGuard) Write(p []byte) (int, error) {
	g.mu.Lock()
	if !g.wrote {
		g.wrote = true
		if len(p) >= 8 && int(p[0])|int(p[1])<<8|int(p[2])<<16 == mysqlSSLRequestLen &&
			binary.LittleEndian.Uint32(p[4:8])&mysqlClientSSL != 0 {
			g.tls, g.done = true, true
			g.report(true, false, nil)
		}
	}
	g.mu.Unlock()
	return g.Conn.Write(p)
}

func (g *authGuard) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done || n == 0 {
		return n, err
	}
	if ferr := g.inspect(p[:n]); ferr != nil {
		g.done = true
		g.Conn.Close()
		g.report(false, false, ferr)
		return 0, ferr
	}
	return n, err
}

// inspect follows the packet framing of b (3-byte length, sequence id,
// payload) and judges each server packet by its first two payload bytes.
func (g *authGuard) inspect(b []byte) error {
	for len(b) > 0 && !g.done {
		if g.left > 0 && len(g.head) == 0 {
			k := min(g.left, len(b))
			g.left -= k
			b = b[k:]
			continue
		}
		g.head = append(g.head, b[0])
		b = b[1:]
		if len(g.head) < 4 {
			continue
		}
		plen := int(g.head[0]) | int(g.head[1])<<8 | int(g.head[2])<<16
		need := 4 + min(plen, 2)
		if len(g.head) < need {
			continue
		}
		payload := g.head[4:need]
		g.left = plen - len(payload)
		g.head = g.head[:0]
		g.packets++
		if err := g.judge(payload); err != nil {
			return err
		}
	}
	return nil
}

func (g *authGuard) judge(payload []byte) error {
	if g.packets == 1 || len(payload) == 0 {
		return nil // the initial handshake
	}
	switch payload[0] {
	case mysqlOK, mysqlERR:
		g.done = true
		if payload[0] == mysqlOK {
			g.report(false, g.insecure, nil)
		}
	case mysqlAuthMoreData:
		if len(payload) == 2 && payload[1] == mysqlFastAuthSuccess {
			return nil
		}
		if g.allow {
			g.insecure = true
			return nil
		}
		what := "the full password (caching_sha2_password full authentication)"
		if len(payload) > 1 && payload[1] == '-' {
			what = "the password encrypted with an RSA key the server sent (sha256_password)"
		}
		return fmt.Errorf("doris mysql %s: the server asked for %s over a plaintext connection: whoever answers on this "+
			"address could read it (Doris FEs use mysql_native_password); set doris.mysql_tls: required with "+
			"doris.tls.ca_file (Config.MySQLTLS), or doris.mysql_allow_insecure_auth: true "+
			"(Config.MySQLAllowInsecureAuth) to allow it: %w", g.addr, what, ErrInsecureMySQLAuth)
	}
	return nil
}
