package coordlog

import (
	"bytes"
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Load returns the latest committed record of the log's key, ok false when
// there is none. It reads the state topic with read_committed up to its last
// stable offset. A transaction of this incarnation whose end is unknown (a
// failed Commit) is resolved first, so the read never misses a record that
// commits later. A record written by another incarnation after Open means
// this one was fenced: *FencedError.
func (l *Log) Load(ctx context.Context) (Record, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return Record{}, false, err
	}
	if err := l.resolve(ctx); err != nil {
		return Record{}, false, err
	}
	return l.readOwn(ctx)
}

// readOwn reads the latest record and fences the log when another
// incarnation wrote it after this one opened.
func (l *Log) readOwn(ctx context.Context) (Record, bool, error) {
	rec, ok, err := l.read(ctx)
	if err != nil {
		return Record{}, false, err
	}
	if ok && rec.Offset >= l.openEnd && rec.Incarnation != l.inc.Token {
		return Record{}, false, l.fence(fmt.Errorf("state record at offset %d was written by incarnation %s after this one opened",
			rec.Offset, rec.Incarnation))
	}
	return rec, ok, nil
}

// checkNoNewer returns the *FencedError when another incarnation wrote the
// log's key after this one opened.
func (l *Log) checkNoNewer(ctx context.Context) error {
	_, _, err := l.readOwn(ctx)
	return err
}

// read scans the state topic from its start to its last stable offset
// and returns the latest record of the log's key.
func (l *Log) read(ctx context.Context) (Record, bool, error) { return l.readKey(ctx, l.key) }

// readKey returns the latest committed record of key.
func (l *Log) readKey(ctx context.Context, k string) (Record, bool, error) {
	end, err := l.stableEnd(ctx)
	if err != nil {
		return Record{}, false, err
	}
	var last Record
	var found bool
	key := []byte(k)
	err = scan(ctx, l.cfg.ClientOpts, l.topic, end, func(r *kgo.Record) error {
		if !bytes.Equal(r.Key, key) {
			return nil
		}
		rec, err := toRecord(l.topic, r)
		if err != nil {
			return err
		}
		last, found = rec, true
		return nil
	})
	if err != nil {
		return Record{}, false, err
	}
	return last, found, nil
}

// scan reads topic's partition 0 with read_committed from its start up to
// end (exclusive), calling fn for every data record (control records are
// kept so the scan reaches the last stable offset, and skipped). It never
// initialises a producer id: any process may scan.
func scan(ctx context.Context, clientOpts []kgo.Opt, topic string, end int64, fn func(*kgo.Record) error) error {
	if end <= 0 {
		return nil
	}
	opts := append(append([]kgo.Opt{}, clientOpts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), // control markers advance the scan to the stable end
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("coordinator log %s: reader: %w", topic, err)
	}
	defer cl.Close()
	next := int64(0)
	var bad error
	for next < end && bad == nil {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("coordinator log %s: read up to offset %d (at %d): %w", topic, end, next, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("coordinator log %s: read at offset %d: %w", topic, next, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if bad != nil || r.Attrs.IsControl() || r.Offset >= end {
				return
			}
			bad = fn(r)
		})
	}
	return bad
}

// toRecord checks the transport format of a state record and returns it.
func toRecord(topic string, r *kgo.Record) (Record, error) {
	if f := header(r, HeaderFormat); f != formatHeader() {
		return Record{}, fmt.Errorf("coordinator log %s: record at offset %d has format %q, this doris-sink reads %q (written by a newer version?)",
			topic, r.Offset, f, formatHeader())
	}
	return Record{Value: r.Value, Offset: r.Offset, Incarnation: header(r, HeaderIncarnation)}, nil
}

// formatHeader is the HeaderFormat value this package writes.
func formatHeader() string { return fmt.Sprintf("%s/%d", FormatName, FormatVersion) }

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
