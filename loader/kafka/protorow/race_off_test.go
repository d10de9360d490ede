//go:build !race

package protorow

const raceEnabled = false
