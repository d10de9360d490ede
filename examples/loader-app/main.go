// Command loader-app shows the loader package in an application: it starts
// an emulated Doris in-process (doris/doristest), creates a Duplicate Key
// table (so a duplicate would show), writes generated events across a few
// checkpoints, crashes at a chosen failpoint (-crash-at NAME), recovers
// with a new Loader on the same checkpoint store and emulator, finishes,
// and checks the table against the source:
//
//	go run ./examples/loader-app -crash-at after-decide
//	rows=1000 duplicates=0 missing=0
//
// It exits non-zero on any mismatch.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loader-app:", err)
		os.Exit(1)
	}
}

type options struct {
	events, every int
	crashAt       string
	skip          int
	dir           string
	verbose       bool
}

func run() error {
	var o options
	flag.IntVar(&o.events, "events", 1000, "events to generate")
	flag.IntVar(&o.every, "every", 150, "events per checkpoint")
	flag.StringVar(&o.crashAt, "crash-at", loader.FailAfterDecide,
		"failpoint to crash at, one of: "+strings.Join(loader.AllFailpoints, ", ")+" (empty: no crash)")
	flag.IntVar(&o.skip, "crash-skip", 0, "pass the failpoint this many times before crashing")
	flag.StringVar(&o.dir, "dir", "", "data dir for the checkpoint store and ledger (default: a temporary dir)")
	flag.BoolVar(&o.verbose, "v", false, "log the loader's steps")
	flag.Parse()
	if o.events <= 0 || o.every <= 0 {
		return errors.New("-events and -every must be positive")
	}
	log := slog.New(slog.DiscardHandler)
	if o.verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	if o.dir == "" {
		d, err := os.MkdirTemp("", "loader-app-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.dir = d
	}
	return app(context.Background(), o, log, os.Stdout)
}

// app runs the crash-and-recover scenario of o against an in-process
// emulator, printing progress to out, and returns an error when the table
// does not hold every event exactly once.
func app(ctx context.Context, o options, log *slog.Logger, out io.Writer) error {
	srv, err := doristest.NewServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.CreateDatabase("demo"); err != nil {
		return err
	}
	if err := srv.CreateTable("demo", "CREATE TABLE events (id BIGINT, payload VARCHAR(64)) DUPLICATE KEY(id) "+
		"DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		return err
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root"})
	if err != nil {
		return err
	}
	defer client.Close()

	// Run 1: crash at the failpoint.
	if o.crashAt != "" {
		fps := loader.NewFailpoints()
		if _, err := fps.Arm(o.crashAt, loader.Crash().Skip(o.skip)); err != nil {
			return err
		}
		err := session(ctx, client, o, log, fps)
		switch {
		case errors.Is(err, loader.ErrCrashed):
			fmt.Fprintf(out, "crashed at %s (after passing it %d times)\n", o.crashAt, fps.Hits(o.crashAt)-1)
		case err != nil:
			return fmt.Errorf("first run: %w", err)
		default:
			fmt.Fprintf(out, "finished without reaching %s\n", o.crashAt)
		}
	}
	// Run 2: a new Loader on the same store and emulator recovers and
	// finishes.
	if err := session(ctx, client, o, log, nil); err != nil {
		return fmt.Errorf("recovery run: %w", err)
	}
	return verify(srv, o.events, out)
}

// session opens a Loader on the store in o.dir, recovers, and writes the
// events from the recovered position to the end, recovering again after
// an ErrNeedRecover error. It returns ErrCrashed when a failpoint crashed
// the loader.
func session(ctx context.Context, client *doris.Client, o options, log *slog.Logger, fps *loader.Failpoints) error {
	owner := checkpoint.Owner{Job: "loader-app", DB: "demo", Table: "events", Source: "generator", Writer: "0"}
	store, err := checkpoint.OpenFile(o.dir, owner)
	if err != nil {
		return err
	}
	l, err := loader.New(client, loader.Config{Job: owner.Job, DB: owner.DB, Table: owner.Table, Source: owner.Source,
		Store: store, LedgerDir: o.dir, Failpoints: fps, Logger: log})
	if err != nil {
		store.Close()
		return err
	}
	for attempt := 0; ; attempt++ {
		err = write(ctx, l, o)
		if !errors.Is(err, loader.ErrNeedRecover) || attempt > 10 {
			break
		}
	}
	if cerr := l.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// write recovers and writes events [position, events).
func write(ctx context.Context, l *loader.Loader, o options) error {
	p, err := l.Recover(ctx)
	if err != nil {
		return err
	}
	var from struct{ Next int }
	if len(p) > 0 {
		if err := json.Unmarshal(p, &from); err != nil {
			return fmt.Errorf("position %s: %w", p, err)
		}
	}
	for i := from.Next; i < o.events; i++ {
		if err := l.Write(ctx, fmt.Appendf(nil, `{"id":%d,"payload":"event-%d"}`, i, i)); err != nil {
			return err
		}
		if (i+1)%o.every == 0 || i+1 == o.events {
			if err := l.Checkpoint(ctx, fmt.Appendf(nil, `{"next":%d}`, i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// verify compares the table with the generated events.
func verify(srv *doristest.Server, events int, out io.Writer) error {
	rows, err := srv.Rows("demo", "events")
	if err != nil {
		return err
	}
	seen := make(map[int64]int, len(rows))
	for _, r := range rows {
		id, _ := r[0].(int64)
		seen[id]++
	}
	dups, missing := 0, 0
	for i := range events {
		switch c := seen[int64(i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups += c - 1
		}
	}
	fmt.Fprintf(out, "rows=%d duplicates=%d missing=%d\n", len(rows), dups, missing)
	if dups > 0 || missing > 0 || len(rows) != events {
		return fmt.Errorf("table does not match the source: %d rows for %d events", len(rows), events)
	}
	return nil
}
