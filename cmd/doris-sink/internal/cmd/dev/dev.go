// Package dev implements `doris-sink dev`: an in-process Doris emulator
// (doris/doristest: FE and BE HTTP, FE MySQL protocol, admin endpoint) and
// an in-process Kafka (franz-go kfake) on loopback, until interrupted.
package dev

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris/doristest"
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
	User, Password                                  string
	Partitions                                      int
	Database                                        string
	NoSample                                        bool
	Output                                          string

	// Backends is the number of BEs (--backends); LoadMBps and
	// BEConcurrentLoads are the BE ingest model (--be-load-mbps,
	// --be-concurrent-loads; 0 = unlimited). See docs/emulator.md.
	Backends          int
	LoadMBps          float64
	BEConcurrentLoads int

	// Ready, when set, is called with the listening endpoints once
	// everything is up (tests use it instead of parsing the output).
	Ready func(Endpoints)
}

// Endpoints are where `dev` listens. JSON names are stable.
type Endpoints struct {
	FE       string `json:"fe"`
	BE       string `json:"be"`
	MySQL    string `json:"mysql"`
	Kafka    string `json:"kafka"`
	Admin    string `json:"admin"`
	User     string `json:"user"`
	Database string `json:"database"`

	// BEs lists every BE (BE is BE 0) when --backends > 1.
	BEs []string `json:"bes,omitempty"`
}

// NewCmdDev returns the dev command; runF replaces Run in tests.
func NewCmdDev(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run an in-process Doris emulator and Kafka on loopback",
		Long: `Run the Doris emulator (FE and BE HTTP, FE MySQL protocol, admin endpoint)
and an in-process Kafka broker until interrupted (Ctrl-C or SIGTERM).
Topics are created on first use. Port 0 picks a free port.`,
		Args: cobra.NoArgs,
		Example: `  # the default ports of a real Doris and Kafka
  $ doris-sink dev

  # free ports, a password, 3 partitions per new topic
  $ doris-sink dev --fe-http 127.0.0.1:0 --be-http 127.0.0.1:0 --mysql 127.0.0.1:0 --kafka 127.0.0.1:0 --password secret --partitions 3`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.Partitions < 1 {
				return cmdutil.FlagErrorf("--partitions must be at least 1, got %d", opts.Partitions)
			}
			if err := validateBackendFlags(opts); err != nil {
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
	fl.StringVar(&opts.User, "user", "root", "Doris user")
	fl.StringVar(&opts.Password, "password", "", "Doris password of --user (local emulator only)")
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
	doris, err := doristest.NewServer(
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
		doristest.WithLoadThroughput(int64(o.LoadMBps*1e6)),
		doristest.WithBEConcurrentLoads(o.BEConcurrentLoads),
	)
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

	ep := Endpoints{
		FE: doris.FEURL(), BE: doris.BEURL(), MySQL: doris.MySQLAddr(), Admin: doris.AdminURL(),
		Kafka: kafka.ListenAddrs()[0], User: o.User, Database: o.Database,
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
