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

// doris.sub_loads: auto chooses K from measured throughput (starting at
// 1, loader.Config.SubLoadsAuto) up to doris.sub_loads_max (default 8).
func TestSubLoadsAutoKey(t *testing.T) {
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Doris.SubLoadsAuto || c.Doris.SubLoadsMax != 8 {
		t.Fatalf("default: auto %v, max %d; want false, 8", c.Doris.SubLoadsAuto, c.Doris.SubLoadsMax)
	}
	c = mustLoad(t, merge(minimal, "doris: {sub_loads: auto, sub_loads_max: 16}\n"), nil, nil, NeedRun)
	if !c.Doris.SubLoadsAuto || c.Doris.SubLoads != 1 || c.Doris.SubLoadsMax != 16 {
		t.Fatalf("auto: auto %v, K %d, max %d; want true, 1, 16", c.Doris.SubLoadsAuto, c.Doris.SubLoads, c.Doris.SubLoadsMax)
	}
	if c := mustLoad(t, minimal, []string{"DORIS_SINK_DORIS__SUB_LOADS=AUTO"}, nil, NeedRun); !c.Doris.SubLoadsAuto {
		t.Fatal("DORIS_SINK_DORIS__SUB_LOADS=AUTO is not auto")
	}
	for _, y := range []string{"doris: {sub_loads: often}\n", "doris: {sub_loads_max: 0}\n", "doris: {sub_loads_max: 300}\n"} {
		_, err := load(t, merge(minimal, y), nil, nil, NeedRun)
		key := "doris.sub_loads_max"
		if y == "doris: {sub_loads: often}\n" {
			key = "doris.sub_loads"
		}
		keyError(t, err, key)
	}
}

// doris.be_spread is fe (the default) or backends, any case.
func TestBESpreadKey(t *testing.T) {
	if c := mustLoad(t, minimal, nil, nil, NeedRun); c.Doris.BESpread != "fe" {
		t.Fatalf("default doris.be_spread = %q, want fe", c.Doris.BESpread)
	}
	if c := mustLoad(t, merge(minimal, "doris: {be_spread: Backends}\n"), nil, nil, NeedRun); c.Doris.BESpread != "backends" {
		t.Fatalf("doris.be_spread Backends = %q", c.Doris.BESpread)
	}
	_, err := load(t, merge(minimal, "doris: {be_spread: random}\n"), nil, nil, NeedRun)
	keyError(t, err, "doris.be_spread")
}
