package config

import (
	"fmt"
	"io/fs"
)

// securityWarnings returns what Load warns about without refusing it:
// secret files that group or others can read (password_file, TLS key_file)
// and SASL PLAIN without TLS (the password crosses the network as is).
// stat is os.Stat; a file that cannot be stat'ed was already reported.
func (c *Config) securityWarnings(stat func(string) (fs.FileInfo, error)) []string {
	var out []string
	for _, f := range []struct{ key, path string }{
		{"doris.password_file", c.Doris.PasswordFile},
		{"kafka.sasl.password_file", c.Kafka.SASL.PasswordFile},
		{"kafka.tls.key_file", c.Kafka.TLS.KeyFile},
	} {
		if f.path == "" {
			continue
		}
		fi, err := stat(f.path)
		if err != nil {
			continue
		}
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			out = append(out, fmt.Sprintf("%s %s is readable by group or others (mode %04o): it holds a secret; chmod 600 %s",
				f.key, f.path, m, f.path))
		}
	}
	if c.Kafka.SASL.Mechanism == "plain" && !c.Kafka.TLS.Enabled {
		out = append(out, "kafka.sasl.mechanism=plain without kafka.tls: SASL PLAIN sends kafka.sasl.user's password "+
			"unencrypted to every broker; enable kafka.tls (or use scram-sha-256/512)")
	}
	return out
}
