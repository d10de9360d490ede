package doris

import (
	"errors"
	"net"
	"syscall"
)

// notSent reports whether a transport error proves the request never left
// the client: the connection could not be established (refused, no route,
// DNS failure). Anything else after a connection existed may have been
// applied by Doris.
func notSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}
