// Package dev implements `doris-sink dev`: an in-process Doris emulator
// (doris/doristest: FE and BE HTTP, FE MySQL protocol, admin endpoint), an
// in-process Kafka (franz-go kfake) and an in-process Schema Registry
// (loader/kafka/registry/srtest) on loopback, until interrupted.
package dev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// SampleTable is the table `dev` creates in --database (unless
// --no-sample): a merge-on-write Unique Key table.
const SampleTable = "orders"

const sampleDDL = "CREATE TABLE orders (order_id BIGINT, status VARCHAR(32), amount DECIMAL(12,2)) " +
	"UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 1 " +
	`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`

// Options are the inputs of `doris-sink dev`.
type Options struct {
	IO *cmdutil.IOStreams

	FEAddr, BEAddr, MySQLAddr, KafkaAddr, AdminAddr string
	// RegistryAddr is where the Schema Registry listens
	// (--schema-registry); empty: no registry.
	RegistryAddr string
	// RegistryFallback: RegistryAddr is the default, not the user's
	// choice; when its port is taken (8081 is also Flink's web UI) the
	// registry listens on a free port of the same host instead, and a
	// warning names it and --schema-registry.
	RegistryFallback bool
	User             string
	// Password is --user's password, read from PasswordFile or from
	// PasswordEnv (never from a flag: it would show in ps).
	Password     string
	PasswordFile string
	// AdminTokenFile holds the admin endpoint's bearer token; empty means
	// none on loopback and a generated one off loopback.
	AdminTokenFile string
	// AllowNonLoopback lets the addresses above leave loopback.
	AllowNonLoopback bool
	Partitions       int
	Database         string
	NoSample         bool
	Output           string

	// Backends is the number of BEs (--backends); LoadMBps and
	// BEConcurrentLoads are the BE ingest model (--be-load-mbps,
	// --be-concurrent-loads; 0 = unlimited). See docs/emulator.md.
	Backends          int
	LoadMBps          float64
	BEConcurrentLoads int

	// Ready, when set, is called with the listening endpoints once
	// everything is up (tests use it instead of parsing the output).
	Ready func(Endpoints)

	adminToken      string // read from AdminTokenFile
	passwordFromEnv bool
}

// Endpoints are where `dev` listens. JSON names are stable.
type Endpoints struct {
	FE    string `json:"fe"`
	BE    string `json:"be"`
	MySQL string `json:"mysql"`
	Kafka string `json:"kafka"`
	Admin string `json:"admin"`
	// SchemaRegistry is the registry's base URL ("" without one).
	SchemaRegistry string `json:"schema_registry,omitempty"`
	User           string `json:"user"`
	Database       string `json:"database"`
	// AdminToken is the admin endpoint's bearer token, when it needs one
	// (off loopback or --admin-token-file).
	AdminToken string `json:"admin_token,omitempty"`

	// BEs lists every BE (BE is BE 0) when --backends > 1.
	BEs []string `json:"bes,omitempty"`
}

// PasswordEnv is the environment variable `dev` reads --user's password
// from: the same one `run` reads doris.password from.
const PasswordEnv = "DORIS_SINK_DORIS__PASSWORD"

// NewCmdDev returns the dev command; runF replaces Run in tests.
func NewCmdDev(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run an in-process Doris emulator, Kafka and Schema Registry on loopback",
		Long: `Run the Doris emulator (FE and BE HTTP, FE MySQL protocol, admin endpoint),
an in-process Kafka broker and an in-process Schema Registry (for
records.format avro; --schema-registry "" turns it off) until interrupted
(Ctrl-C or SIGTERM). Topics are created on first use. Port 0 picks a free
port.

Everything listens on loopback: addresses off loopback need
--allow-non-loopback, and then the admin endpoint requires a bearer token
(printed once). The emulator is a sandbox without real security: never
expose it to a network you do not trust.

The password of --user comes from --password-file or the ` + PasswordEnv + `
environment variable (default: empty), never from the command line.`,
		Args: cobra.NoArgs,
		Example: `  # the default ports of a real Doris and Kafka
  $ doris-sink dev

  # free ports, a password, 3 partitions per new topic
  $ ` + PasswordEnv + `=secret doris-sink dev --fe-http 127.0.0.1:0 --be-http 127.0.0.1:0 --mysql 127.0.0.1:0 --kafka 127.0.0.1:0 --partitions 3`,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed("password") {
				return cmdutil.FlagErrorf("--password would put the password in the process's command line, where " +
					"other local users can read it (ps, /proc); use --password-file FILE or the " + PasswordEnv + " environment variable")
			}
			if opts.Partitions < 1 {
				return cmdutil.FlagErrorf("--partitions must be at least 1, got %d", opts.Partitions)
			}
			if err := validateBackendFlags(opts); err != nil {
				return err
			}
			if err := opts.checkLoopback(); err != nil {
				return err
			}
			opts.RegistryFallback = !c.Flags().Changed("schema-registry")
			if err := opts.readSecrets(f.Environ); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.FEAddr, "fe-http", "127.0.0.1:8030", "FE HTTP listen address")
	fl.StringVar(&opts.BEAddr, "be-http", "127.0.0.1:8040", "BE HTTP listen address")
	fl.StringVar(&opts.MySQLAddr, "mysql", "127.0.0.1:9030", "FE MySQL protocol listen address")
	fl.StringVar(&opts.KafkaAddr, "kafka", "127.0.0.1:9092", "Kafka broker listen address")
	fl.StringVar(&opts.AdminAddr, "admin", "127.0.0.1:0", "emulator admin endpoint listen address (docs/emulator.md)")
	fl.StringVar(&opts.RegistryAddr, "schema-registry", "127.0.0.1:8081", "Schema Registry listen address (docs/emulator.md, Schema Registry); empty: none")
	fl.StringVar(&opts.User, "user", "root", "Doris user")
	var refused string
	fl.StringVar(&refused, "password", "", "refused: use --password-file or "+PasswordEnv)
	_ = fl.MarkHidden("password")
	fl.StringVar(&opts.PasswordFile, "password-file", "", "file holding the Doris password of --user (default: "+PasswordEnv+", else empty)")
	fl.StringVar(&opts.AdminTokenFile, "admin-token-file", "", "file holding the admin endpoint's bearer token (default: none on loopback, generated off loopback)")
	fl.BoolVar(&opts.AllowNonLoopback, "allow-non-loopback", false, "allow listen addresses off loopback (exposes an unsecured sandbox; see docs/operations.md)")
	fl.IntVar(&opts.Partitions, "partitions", 3, "partitions of auto-created topics")
	fl.StringVar(&opts.Database, "database", "demo", "database to create")
	fl.BoolVar(&opts.NoSample, "no-sample", false, "do not create the sample table "+SampleTable)
	addBackendFlags(cmd, opts)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run starts both servers, prints the endpoints and examples, and blocks
// until ctx is done; then it shuts both down and returns nil.
func Run(ctx context.Context, o *Options) error {
	opts := []doristest.Opt{
		doristest.ListenFE(o.FEAddr),
		doristest.ListenBE(o.BEAddr),
		doristest.ListenMySQL(o.MySQLAddr),
		doristest.ListenAdmin(o.AdminAddr),
		doristest.Users(map[string]string{o.User: o.Password}),
		doristest.SeedDatabases(o.Database),
		// The FE URL printed and the BE URLs in its 307s name one host, so
		// a client following the redirect keeps its credentials.
		doristest.URLHost(devURLHost),
		doristest.WithBackends(o.Backends),
		doristest.WithLoadThroughput(int64(o.LoadMBps * 1e6)),
		doristest.WithBEConcurrentLoads(o.BEConcurrentLoads),
	}
	if o.AllowNonLoopback {
		opts = append(opts, doristest.AllowNonLoopback())
	}
	if o.adminToken != "" {
		opts = append(opts, doristest.AdminToken(o.adminToken))
	}
	doris, err := doristest.NewServer(opts...)
	if err != nil {
		return fmt.Errorf("start Doris emulator: %w", err)
	}
	defer doris.Close()
	if !o.NoSample {
		if err := doris.CreateTable(o.Database, sampleDDL); err != nil {
			return fmt.Errorf("create sample table: %w", err)
		}
	}
	kafka, err := startKafka(o.KafkaAddr, o.Partitions)
	if err != nil {
		return err
	}
	defer kafka.Close()
	// Kafka's group rule kfake lacks (issue 29): a member waiting in its
	// JoinGroup or SyncGroup is not expired by its session timeout.
	stopKeep, err := kafkatest.KeepParkedMembers(kafka, 0)
	if err != nil {
		return fmt.Errorf("start Kafka: %w", err)
	}
	defer stopKeep()
	registryURL := ""
	if o.RegistryAddr != "" {
		reg, err := srtest.NewServer(srtest.WithAddr(o.RegistryAddr))
		if err != nil && o.RegistryFallback && errors.Is(err, syscall.EADDRINUSE) {
			host, _, _ := net.SplitHostPort(o.RegistryAddr)
			free := net.JoinHostPort(host, "0")
			if reg, err = srtest.NewServer(srtest.WithAddr(free)); err == nil {
				fmt.Fprintf(o.IO.ErrOut, "warning: Schema Registry: %s is in use (8081 is also Flink's web UI); serving it on %s "+
					"instead; pass --schema-registry host:port to choose, or --schema-registry \"\" for none\n", o.RegistryAddr, reg.URL())
			}
		}
		if err != nil {
			return fmt.Errorf("start Schema Registry on --schema-registry %s: %w (choose a free address with "+
				"--schema-registry host:port, or turn it off with --schema-registry \"\")", o.RegistryAddr, err)
		}
		defer reg.Close()
		registryURL = reg.URL()
	}

	ep := Endpoints{
		FE: doris.FEURL(), BE: doris.BEURL(), MySQL: doris.MySQLAddr(), Admin: doris.AdminURL(),
		Kafka: kafka.ListenAddrs()[0], User: o.User, Database: o.Database, AdminToken: doris.AdminToken(),
		SchemaRegistry: registryURL,
	}
	if exposed := o.exposed(); len(exposed) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "WARNING: doris-sink dev listens off loopback (%s). Anyone who can reach these ports "+
			"can read, load and drop data, and Kafka has no authentication; passwords cross the HTTP and MySQL ports "+
			"in plaintext. Never expose dev to a network you do not trust.\n", strings.Join(exposed, ", "))
	}
	if doris.NumBackends() > 1 {
		ep.BEs = doris.BEURLs()
	}
	if o.Output == cmdutil.OutputJSON {
		err = cmdutil.WriteJSON(o.IO.Out, ep)
	} else {
		err = printHuman(o, ep)
	}
	if err != nil {
		return err
	}
	if o.Ready != nil {
		o.Ready(ep)
	}
	<-ctx.Done()
	fmt.Fprintln(o.IO.ErrOut, "shutting down")
	return nil
}

// startKafka runs a one-broker kfake cluster on addr (kfake itself only
// listens on 127.0.0.1, so ListenFn binds the requested address).
func startKafka(addr string, partitions int) (*kfake.Cluster, error) {
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--kafka %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--kafka %q: bad port", addr)
	}
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, addr) }),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(partitions),
	)
	if err != nil {
		return nil, fmt.Errorf("start Kafka: %w", err)
	}
	return c, nil
}
