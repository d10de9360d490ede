package config

import "testing"

// doris.sub_loads defaults to 1 (one Stream Load per table per
// checkpoint), takes 1 to 256, and refuses anything else naming the key.
func TestSubLoadsKey(t *testing.T) {
	if c := mustLoad(t, minimal, nil, nil, NeedRun); c.Doris.SubLoads != 1 {
		t.Fatalf("default doris.sub_loads = %d, want 1", c.Doris.SubLoads)
	}
	if c := mustLoad(t, merge(minimal, "doris: {sub_loads: 4}\n"), nil, nil, NeedRun); c.Doris.SubLoads != 4 {
		t.Fatalf("doris.sub_loads 4 = %d", c.Doris.SubLoads)
	}
	if c := mustLoad(t, minimal, []string{"DORIS_SINK_DORIS__SUB_LOADS=8"}, nil, NeedRun); c.Doris.SubLoads != 8 {
		t.Fatalf("DORIS_SINK_DORIS__SUB_LOADS=8 = %d", c.Doris.SubLoads)
	}
	for _, y := range []string{"doris: {sub_loads: 0}\n", "doris: {sub_loads: 257}\n", "doris: {sub_loads: -2}\n"} {
		_, err := load(t, merge(minimal, y), nil, nil, NeedRun)
		keyError(t, err, "doris.sub_loads")
	}
}
