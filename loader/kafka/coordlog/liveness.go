package coordlog

import (
	"context"
	"fmt"
)

// CheckFenced asks the transaction coordinator who owns the log's
// transactional id. Another producer id, or an epoch above this
// incarnation's current one, means a newer incarnation opened the log:
// the log becomes fenced and CheckFenced returns its *FencedError. An idle
// writer (nothing to save) learns of it this way instead of at its next
// save. Other failures (the coordinator unreachable) are returned as they
// are and change nothing. It never initialises the producer id (that
// could fence the newer incarnation): while a transaction's end is
// unresolved it checks nothing and returns nil.
func (l *Log) CheckFenced(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if l.unresolved != nil {
		return nil
	}
	id, epoch, err := l.cl.ProducerID(ctx)
	if err != nil {
		return l.classify(fmt.Errorf("producer id: %w", err))
	}
	dts, err := l.adm.DescribeTransactions(ctx, l.txnID)
	if err != nil {
		return fmt.Errorf("coordinator log %s: describe transactional id %s: %w", l.topic, l.txnID, err)
	}
	dt, ok := dts[l.txnID]
	if !ok {
		return fmt.Errorf("coordinator log %s: describe transactional id %s: not in the answer", l.topic, l.txnID)
	}
	if dt.Err != nil {
		return fmt.Errorf("coordinator log %s: describe transactional id %s: %w", l.topic, l.txnID, dt.Err)
	}
	if dt.ProducerID != id || dt.ProducerEpoch > epoch {
		return l.fence(fmt.Errorf("the transaction coordinator says transactional id %s belongs to producer %d epoch %d; "+
			"this incarnation is producer %d epoch %d", l.txnID, dt.ProducerID, dt.ProducerEpoch, id, epoch))
	}
	return nil
}

// CheckFenced is Log.CheckFenced.
func (s *Store) CheckFenced(ctx context.Context) error { return s.log.CheckFenced(ctx) }
