package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// AddConfigFlag adds -c/--config, the config file (YAML, or a Kafka
// Connect connector's .properties or .json).
func AddConfigFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "config", "c", "", "config file: YAML (keys in docs/configuration.md), or a Kafka Connect connector's .properties or .json (its option names)")
}

// AddDorisFlags adds the Doris connection flags, bound to their config keys
// so they override the file and environment: --fe, --mysql, --user,
// --password-file and --db. Passwords are never flags: use
// --password-file, doris.password_file or DORIS_SINK_DORIS__PASSWORD.
func AddDorisFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringSlice("fe", nil, "Doris FE HTTP URLs (doris.fe)")
	fs.String("mysql", "", "Doris FE MySQL address host:port (doris.mysql)")
	fs.String("user", "", "Doris user (doris.user)")
	fs.String("password-file", "", "file holding the Doris password (doris.password_file)")
	fs.String("db", "", "Doris database (doris.database)")
	config.BindFlag(fs, "fe", "doris.fe")
	config.BindFlag(fs, "mysql", "doris.mysql")
	config.BindFlag(fs, "user", "doris.user")
	config.BindFlag(fs, "password-file", "doris.password_file")
	config.BindFlag(fs, "db", "doris.database")
}

// LoadConfig loads the configuration for cmd: defaults, the file, the
// environment, then cmd's bound flags.
func LoadConfig(f *Factory, cmd *cobra.Command, file string, need config.Need) (*config.Config, error) {
	c, err := config.Load(config.LoadOptions{File: file, Environ: f.Environ, Flags: cmd.Flags(), Need: need})
	if err != nil {
		return nil, err
	}
	for _, w := range c.Warnings {
		f.IO.ErrOut.Write([]byte("warning: " + w + "\n"))
	}
	return c, nil
}
