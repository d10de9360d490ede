//go:build race

package kafka

// raceEnabled: the race detector is on; its instrumentation allocates, so
// allocation counts are not asserted.
const raceEnabled = true
