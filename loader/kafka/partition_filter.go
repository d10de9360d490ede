package kafka

// WithPartitionFilter makes the Connector read only the source partitions
// keep accepts (group mode: the partitions of one writer slot,
// coordlog.SlotOf). It applies wherever partitions are listed or assigned:
// the start (earliest offsets, kafka.start latest/committed/explicit
// offsets, the persisted first start), rewinds, partitions added later
// (PartitionRefresh: a new partition keep accepts starts at its earliest
// offset, as without a filter) and topics kafka.topic_regex matches later.
// Every position the Connector decides names only accepted partitions. A
// topic none of whose partitions is accepted is read by nobody here (an
// empty assignment), not reported missing. nil: every partition.
func WithPartitionFilter(keep func(topic string, partition int32) bool) Opt {
	return optFunc(func(o *options) { o.partitionFilter = keep })
}

// owns reports whether the Connector reads partition p of topic
// (WithPartitionFilter).
func (c *Connector) owns(topic string, p int32) bool {
	return c.o.partitionFilter == nil || c.o.partitionFilter(topic, p)
}

// keepOwned drops from offs the partitions the Connector does not read; a
// topic left without partitions stays as an empty entry.
func (c *Connector) keepOwned(offs topicOffsets) {
	if c.o.partitionFilter == nil {
		return
	}
	for t, po := range offs {
		for p := range po {
			if !c.owns(t, p) {
				delete(po, p)
			}
		}
	}
}
