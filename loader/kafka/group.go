package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// commitGroup commits the decided position end to Config.Group, for
// monitoring only (consumer-lag tools). The Connector is not a member, so
// the commit uses generation −1 (kadm.CommitOffsets): it
// succeeds while the group has no members. A failure is logged and counted
// (Metrics.GroupCommitFailures), never fatal. The metadata names the
// checkpoint decided last (Sink.LastDecision):
// "doris-sink:chk=<id>:label=<label>", or "doris-sink" if the sink names
// none.
func (c *Connector) commitGroup(ctx context.Context, end Position) {
	if c.cfg.Group == "" || c.storeCommitsOffsets() { // a coordinator log commits them in its transaction
		return
	}
	md := "doris-sink"
	if id, lbl, _ := c.sink.LastDecision(); id != 0 {
		md = fmt.Sprintf("doris-sink:chk=%d:label=%s", id, lbl)
	}
	var offs kadm.Offsets
	for t, po := range end.PerTopic() {
		for p, o := range po {
			offs.Add(kadm.Offset{Topic: t, Partition: p, At: o, LeaderEpoch: -1, Metadata: md})
		}
	}
	cctx, cancel := context.WithTimeout(ctx, c.o.commitTimeout)
	defer cancel()
	resp, err := c.adm.CommitOffsets(cctx, c.cfg.Group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		c.metrics.GroupCommitFailures.Add(1)
		c.o.logger.Warn("monitoring commit to consumer group failed", "group", c.cfg.Group, "err", err)
	}
	if c.knobs.AfterGroupCommit != nil {
		c.knobs.AfterGroupCommit(end, err)
	}
}
