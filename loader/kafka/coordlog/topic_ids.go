package coordlog

import (
	"maps"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

var _ kafka.TopicIDRecorder = (*Store)(nil)

// TopicIDs returns the IDs (hex) of the source topics this Store records
// with its positions (kafka.TopicIDRecorder): looked up at open, after the
// open checked them against the IDs the state records. The Connector
// refuses to read a topic under another ID (*kafka.TopicRecreatedError).
func (s *Store) TopicIDs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.tids)
}
