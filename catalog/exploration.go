package catalog

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Medians are one exploration target's measured median seeds to the first
// failure in its own scenario, per strategy, as docs/exploration.md's table
// gives them (BenchmarkSeedsToFirstFailure; "300" means the cap was hit).
type Medians struct {
	FoundIn            string
	Random, Swarm, PCT string
}

// String renders m as "random / swarm / pct".
func (m Medians) String() string { return m.Random + " / " + m.Swarm + " / " + m.PCT }

// ParseExploration reads docs/exploration.md's table: the rows whose first
// cell is a target in backquotes (`switch/NAME`, `mutant/NAME`), then the
// scenario and at least the three strategies' medians in that scenario. It
// returns the medians by target name; the error names the first malformed
// row's line.
func ParseExploration(r io.Reader) (map[string]Medians, error) {
	out := map[string]Medians{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 5 || !strings.HasSuffix(cells[0], "`") {
			return nil, fmt.Errorf("exploration table line %d: want | `target` | scenario | random | swarm | pct | ...", n)
		}
		name := strings.Trim(cells[0], "`")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("exploration table line %d: target %s listed twice", n, name)
		}
		out[name] = Medians{FoundIn: cells[1], Random: cells[2], Swarm: cells[3], PCT: cells[4]}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
