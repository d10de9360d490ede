package bench

import (
	"fmt"
	"slices"
	"strings"
)

// selectCombos keeps the combos of p named in names (e.g. "json-100B-p8")
// and drops the latency, recovery and group cases: `--case` measures only the
// named throughput combos. An unknown name is an error listing the valid
// ones.
func selectCombos(p Plan, names []string) (Plan, error) {
	var valid []string
	for _, c := range p.Combos {
		valid = append(valid, c.Name())
	}
	var out []Combo
	for _, n := range names {
		i := slices.Index(valid, n)
		if i < 0 {
			return Plan{}, fmt.Errorf("unknown case %q; valid: %s", n, strings.Join(valid, ", "))
		}
		out = append(out, p.Combos[i])
	}
	p.Combos, p.Latency, p.Recovery, p.Group = out, nil, false, nil
	return p, nil
}
