package chaos

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Campaign flags: go test ./chaos -run TestCampaign -chaos.cycles=500 -chaos.seed=7 -timeout 2h
var (
	flagCycles = flag.Int("chaos.cycles", 40, "faults injected by TestCampaign")
	flagSeed   = flag.Uint64("chaos.seed", DefaultSeed, "seed of TestCampaign's fault schedule and history")
	flagMode   = flag.String("chaos.mode", "exactly-once", "delivery.guarantee of TestCampaign: exactly-once or at-least-once")
	flagRace   = flag.Bool("chaos.race", false, "build the doris-sink binary with -race")
	flagCoord  = flag.String("chaos.coordinator", "", "job.coordinator of TestCampaign's sinks: kafka (the default) or file")
	flagFormat = flag.String("chaos.format", "", "record format of TestCampaign's topic: json (default), avro or protobuf (through an in-process Schema Registry)")
)

// DefaultSeed is the CI campaign's fixed seed.
const DefaultSeed = 20260601

// binary is the doris-sink binary built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	if b := os.Getenv("CHAOS_DORIS_SINK_BIN"); b != "" { // a prebuilt binary
		binary = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "doris-sink-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "doris-sink")
	args := []string{"build", "-o", binary}
	if *flagRace {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "../cmd/doris-sink")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build doris-sink: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
