package doris

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
)

// notSent reports whether a transport error proves the request never left
// the client: the connection could not be established (refused, no route,
// DNS failure, or a TLS handshake the client broke off because it could not
// verify the server, see tlsRefused). Anything else after a connection
// existed may have been applied by Doris.
func notSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || tlsRefused(err) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// tlsRefused reports whether err is a TLS handshake failure decided by the
// client before any request byte was written: the server's certificate did
// not verify (unknown authority, wrong host name, expired), or the server
// answered the ClientHello with something that is not TLS. Alerts sent by
// the server are not included: under TLS 1.3 a client may already have
// written its request when the server rejects the handshake.
func tlsRefused(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) ||
		errors.As(err, &ci) || errors.As(err, &rh)
}

// IsCertificateError reports whether err (from any Client method) is a
// failure to verify a Doris endpoint's TLS certificate: an unknown
// authority (Config.TLS.RootCAs lacks the CA, e.g. doris.tls.ca_file is
// missing or wrong), a host name the certificate does not cover, or an
// expired or otherwise invalid certificate. Such a request never reached
// Doris: IsAmbiguous is false for it.
func IsCertificateError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}
