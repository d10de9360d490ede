package coordlog

import (
	"maps"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

var (
	_ kafka.TopicIDRecorder = (*Store)(nil)
	_ kafka.OffsetCommitter = (*Store)(nil)
)

// TopicIDs returns the IDs (hex) of the source topics this Store records
// with its positions (kafka.TopicIDRecorder): looked up at open, after the
// open checked them against the IDs the state records. The Connector
// refuses to read a topic under another ID (*kafka.TopicRecreatedError).
func (s *Store) TopicIDs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.tids)
}

// CommitsGroupOffsets is true (kafka.OffsetCommitter): every Save commits
// the decided end offsets to the group in its transaction, so the
// Connector's own monitoring commit is off.
func (s *Store) CommitsGroupOffsets() bool { return true }
