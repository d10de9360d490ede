package cmdutil

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// SecurityWarnings lists what cfg (with its client c) sends in plaintext
// or lets through on purpose: `run` logs each at start-up, `check` prints
// each as a WARN line (docs/operations.md "Security").
func SecurityWarnings(cfg *config.Config, c *doris.Client) []string {
	var out []string
	// Loopback traffic never crosses the network (dev, demo): no warning.
	switch mysqlHost, _, _ := net.SplitHostPort(cfg.Doris.MySQL); {
	case IsLoopback(mysqlHost):
	case c.MySQLTLS() == doris.MySQLTLSOff:
		out = append(out, fmt.Sprintf("doris.mysql %s is plaintext (doris.mysql_tls=off): the MySQL login of user %s "+
			"(mysql_native_password, a challenge a listener can brute-force offline) and every statement and result cross "+
			"the network unencrypted; set doris.tls.ca_file (doris.mysql_tls then defaults to required)", cfg.Doris.MySQL, cfg.Doris.User))
	case c.MySQLTLS() == doris.MySQLTLSPreferred:
		out = append(out, fmt.Sprintf("doris.mysql %s: doris.mysql_tls=preferred falls back to plaintext when the FE offers "+
			"no TLS (logged when it happens); set doris.mysql_tls: required", cfg.Doris.MySQL))
	}
	var plain []string
	for _, s := range append(append([]string(nil), cfg.Doris.FE...), cfg.Doris.BE...) {
		if u, err := url.Parse(s); err == nil && u.Scheme == "http" && !IsLoopback(u.Hostname()) {
			plain = append(plain, doris.Redact(s))
		}
	}
	if len(plain) > 0 {
		out = append(out, fmt.Sprintf("%s: plain http: the Doris credentials (HTTP Basic) and Stream Load bodies cross the "+
			"network unencrypted; use https endpoints with doris.tls.ca_file", strings.Join(plain, ", ")))
	}
	if cfg.Doris.RedirectAllowHTTP {
		out = append(out, "doris.redirect_allow_http=true: an https FE's redirect to an http BE sends the credentials unencrypted")
	}
	if cfg.Doris.MySQLAllowInsecureAuth {
		out = append(out, "doris.mysql_allow_insecure_auth=true: over plaintext MySQL the password itself may be sent (cleartext or RSA with a key the server sends)")
	}
	out = append(out, registryWarnings(cfg)...)
	for _, h := range cfg.Doris.RedirectAllowHosts {
		if h == "*" {
			out = append(out, "doris.redirect_allow_hosts contains *: a redirect may carry the Doris credentials to any host")
		}
	}
	return out
}

// IsLoopback reports whether host is localhost or a loopback address:
// traffic to it never crosses the network.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// registryWarnings warns about plain-http Schema Registry URLs off
// loopback when the job sends registry credentials.
func registryWarnings(cfg *config.Config) []string {
	r := cfg.Records.SchemaRegistry
	if !config.IsRegistryFormat(cfg.Records.Format) || (r.Username == "" && r.Bearer == "") {
		return nil
	}
	var plain []string
	for _, s := range r.URLs {
		if u, err := url.Parse(s); err == nil && u.Scheme == "http" && !IsLoopback(u.Hostname()) {
			plain = append(plain, s)
		}
	}
	if len(plain) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("records.schema_registry.urls %s: plain http: the registry credentials cross the network "+
		"unencrypted; use https URLs (records.schema_registry.tls.ca_file)", strings.Join(plain, ", "))}
}
