package catalog

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Medians are one exploration target's measured median seeds to the first
// failure in its own scenario, per strategy, as docs/exploration.md's table
// gives them (BenchmarkSeedsToFirstFailure; ">300" means the cap was hit;
// a strategy the table has no column for is "").
type Medians struct {
	FoundIn                    string
	Random, Swarm, PCT, Commit string
}

// String renders m as "random / swarm / pct[ / commit]".
func (m Medians) String() string {
	s := m.Random + " / " + m.Swarm + " / " + m.PCT
	if m.Commit != "" {
		s += " / " + m.Commit
	}
	return s
}

// ParseExploration reads docs/exploration.md's table: its header names the
// columns (target, found in, then each strategy in the target's own
// scenario, then "chaos: ..." columns), and each row whose first cell is a
// target in backquotes (`switch/NAME`, `mutant/NAME`) gives the target's
// medians: the first number of each own-scenario strategy cell ("12 (40
// ms)" is 12 seeds). It returns the medians by target name; the error
// names the first malformed row's line.
func ParseExploration(r io.Reader) (map[string]Medians, error) {
	out := map[string]Medians{}
	cols := []string{"target", "found in", "random", "swarm", "pct"}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "| target |") {
			cols = splitRow(line)
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 5 || !strings.HasSuffix(cells[0], "`") {
			return nil, fmt.Errorf("exploration table line %d: want | `target` | scenario | random | swarm | pct | ...", n)
		}
		name := strings.Trim(cells[0], "`")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("exploration table line %d: target %s listed twice", n, name)
		}
		m := Medians{FoundIn: cells[1]}
		for i := 2; i < len(cells) && i < len(cols) && !strings.HasPrefix(cols[i], "chaos:"); i++ {
			seeds, _, _ := strings.Cut(cells[i], " ")
			switch cols[i] {
			case "random":
				m.Random = seeds
			case "swarm":
				m.Swarm = seeds
			case "pct":
				m.PCT = seeds
			case "commit":
				m.Commit = seeds
			}
		}
		out[name] = m
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no exploration table (no row | `target` | ...)")
	}
	return out, nil
}

func splitRow(line string) []string {
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}
