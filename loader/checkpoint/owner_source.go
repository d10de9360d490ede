package checkpoint

import "slices"

// Adopts reports whether a store recorded for stored may be opened for o:
// stored is o but for its Source, which is one of previous (sources o
// supersedes, e.g. "kafka:orders" for a job switched from kafka.topic
// orders to kafka.topics [orders, more], whose source is "kafka"). A
// store that adopts its stored owner returns its states with o and
// records o with the next Save.
func (o Owner) Adopts(stored Owner, previous []string) bool {
	if stored == o || !slices.Contains(previous, stored.Source) {
		return false
	}
	stored.Source = o.Source
	return stored == o
}
