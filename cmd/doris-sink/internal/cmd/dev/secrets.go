package dev

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// readSecrets fills Password from PasswordFile or PasswordEnv (one source
// at most) and the admin token from AdminTokenFile.
func (o *Options) readSecrets(environ func() []string) error {
	env, inEnv := "", false
	if environ != nil {
		for _, kv := range environ() {
			if v, ok := strings.CutPrefix(kv, PasswordEnv+"="); ok {
				env, inEnv = v, true
			}
		}
	}
	switch {
	case o.PasswordFile != "" && inEnv:
		return cmdutil.FlagErrorf("--password-file and %s are both set: use one", PasswordEnv)
	case o.PasswordFile != "":
		pw, err := readSecretFile("--password-file", o.PasswordFile)
		if err != nil {
			return err
		}
		o.Password = pw
	case inEnv:
		o.Password, o.passwordFromEnv = env, true
	}
	if o.AdminTokenFile != "" {
		tok, err := readSecretFile("--admin-token-file", o.AdminTokenFile)
		if err != nil {
			return err
		}
		if tok == "" {
			return cmdutil.FlagErrorf("--admin-token-file %s is empty", o.AdminTokenFile)
		}
		o.adminToken = tok
	}
	return nil
}

// readSecretFile reads a one-line secret (trailing newlines dropped).
func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// addrFlags pairs each listen flag with its value.
func (o *Options) addrFlags() [][2]string {
	out := [][2]string{{"--fe-http", o.FEAddr}, {"--be-http", o.BEAddr}, {"--mysql", o.MySQLAddr},
		{"--kafka", o.KafkaAddr}, {"--admin", o.AdminAddr}}
	if o.RegistryAddr != "" {
		out = append(out, [2]string{"--schema-registry", o.RegistryAddr})
	}
	return out
}

// checkLoopback refuses addresses off loopback without --allow-non-loopback.
func (o *Options) checkLoopback() error {
	if o.AllowNonLoopback {
		return nil
	}
	for _, a := range o.addrFlags() {
		if !isLoopback(a[1]) {
			return cmdutil.FlagErrorf("%s %q is not a loopback address; the emulator has no real security, so "+
				"listening there needs --allow-non-loopback (see docs/operations.md, The sandbox)", a[0], a[1])
		}
	}
	return nil
}

// exposed lists the flags whose address is off loopback.
func (o *Options) exposed() []string {
	var out []string
	for _, a := range o.addrFlags() {
		if !isLoopback(a[1]) {
			out = append(out, a[0]+" "+a[1])
		}
	}
	return out
}

// isLoopback reports whether addr's host is "localhost" or a loopback IP
// (an empty host listens on every interface).
func isLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		h = addr
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
