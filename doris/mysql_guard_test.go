package doris

import (
	"errors"
	"testing"
)

func packet(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// The guard follows MySQL packet framing across arbitrary read splits: the
// initial handshake passes, caching_sha2_password's fast-auth success
// passes, and an AuthMoreData carrying a server RSA key (sha256_password)
// or asking for full authentication fails the read.
func TestAuthGuardFraming(t *testing.T) {
	t.Parallel()
	handshake := packet(0, append([]byte{0x0a}, []byte("8.0.30\x00 padding to look like a handshake")...)...)
	pem := append([]byte{mysqlAuthMoreData}, []byte("-----BEGIN PUBLIC KEY-----\nMIIB...\n-----END PUBLIC KEY-----\n")...)
	for _, tc := range []struct {
		name    string
		stream  []byte
		refused bool
	}{
		{"sha256 RSA key", append(append([]byte{}, handshake...), packet(2, pem...)...), true},
		{"full auth", append(append([]byte{}, handshake...), packet(2, mysqlAuthMoreData, 0x04)...), true},
		{"fast auth then OK", append(append(append([]byte{}, handshake...), packet(2, mysqlAuthMoreData, mysqlFastAuthSuccess)...), packet(3, mysqlOK, 0, 0, 2, 0, 0, 0)...), false},
		{"OK then a result row starting 0x01", append(append(append([]byte{}, handshake...), packet(2, mysqlOK, 0, 0)...), packet(1, 0x01, 0x41)...), false},
	} {
		for _, split := range []int{1, 3, 1 << 20} {
			var plain, reported bool
			g := &authGuard{addr: "fe:9030", report: func(tls, _ bool, refused error) {
				reported, plain = refused == nil, !tls
			}}
			var err error
			for b := tc.stream; len(b) > 0 && err == nil; {
				k := min(split, len(b))
				err = g.inspect(b[:k])
				b = b[k:]
			}
			if tc.refused != errors.Is(err, ErrInsecureMySQLAuth) {
				t.Errorf("%s split %d: err %v, refused want %t", tc.name, split, err, tc.refused)
			}
			if !tc.refused && (!reported || !plain) {
				t.Errorf("%s split %d: plaintext login not reported", tc.name, split)
			}
		}
	}
}
