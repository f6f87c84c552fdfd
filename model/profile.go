// Package model holds what every simulated component shares: the Profile of
// behaviour switches and the Env a component is built with. The components
// themselves live in the subpackages (mcp, provider, browser, store, server,
// agent), one job each; server is the composition root.
package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orchsim/orchsim/catalog"
)

// Switch names one behaviour that a report describes and a fix changes.
// Names are contracts (CLI flags, replay files); see MODEL.md Part 0.
type Switch string

// The switches this build models. Each is off (the behaviour as reported)
// or on (the fix).
const (
	// StableTabOwner keys tab ownership on durable identity
	// (environmentId NUL threadId) instead of the per-credential
	// providerSessionId. Report 000 (#23021), fix F1.
	StableTabOwner Switch = "stable-tab-owner"
)

// Mutant names a deliberately wrong fix, available only by name, never in a
// preset; the invariant suite must catch each one.
type Mutant string

const (
	// IgnoreTabOwner lets any caller act on any tab (no owner check, tab
	// looked up server-wide by id).
	IgnoreTabOwner Mutant = "ignore-tab-owner"
	// RevokeByThread makes a stale session's credential clean-up revoke every
	// credential of the thread (clearMcpSession(threadId)) instead of only
	// the one it recorded.
	RevokeByThread Mutant = "revoke-by-thread"
)

// SwitchInfo declares a switch: the package that implements the fork
// registers it from init, beside the code that reads it. Every field is
// required (RegisterSwitch panics otherwise); scenarios' tests check that
// Scenario and Invariants name registered ones and that the bug is found
// there alone.
type SwitchInfo struct {
	Name  Switch
	Group catalog.Group
	// Reports are the public reports (BUGS.md ids, e.g. t3code#23021) whose
	// behaviour the switch turns off.
	Reports []catalog.Report
	// Source names the seed report file, upstream PR or MODEL.md section.
	Source string
	// Scenario is where `--profile fixed --unfix Name` finds the bug.
	Scenario string
	// Invariants are the invariants or obligations that catch it.
	Invariants []string
	// Reported and Fixed say what the switch does off and on.
	Reported string
	Fixed    string
	// Upstream names where the upstream project merged the fix (a PR or
	// commit); empty while it is not merged there. The upstream preset
	// turns on exactly these.
	Upstream string
	// Script is the script that replays the report's own steps, a path
	// under scenarios/testdata ("" while there is none).
	Script string
	// Mechanism names the model mechanism the bug lives in, as
	// "package: what" (e.g. "model/mcp: credential expiry clock"), the
	// package that owns it first. Required.
	Mechanism string
}

// MutantInfo declares a mutant, registered from init by the package that
// implements it. Scenario and Invariants say where the mutation gate is
// expected to kill it and by what (checked by scenarios' tests).
type MutantInfo struct {
	Name       Mutant
	Group      catalog.Group
	Doc        string
	Scenario   string
	Invariants []string
	// GateSeeds is how many seeds of each scenario the mutation gate
	// (`orchsim mutants` without --seeds, as .ci/run calls it) gives the
	// mutant, 0 meaning DefaultGateSeeds; GateStrategy is the strategy it
	// runs under ("" meaning random). A mutant that needs a coincidence
	// records what kills it reliably (from docs/exploration.md's
	// measurements), so it stays killed instead of surviving a fixed
	// budget.
	GateSeeds    uint64
	GateStrategy string
}

// DefaultGateSeeds is the mutation gate's seeds per scenario for a mutant
// that records none.
const DefaultGateSeeds = 100

// Gate returns the seeds per scenario and the strategy the mutation gate
// gives m.
func (m MutantInfo) Gate() (seeds uint64, strategy string) {
	seeds, strategy = m.GateSeeds, m.GateStrategy
	if seeds == 0 {
		seeds = DefaultGateSeeds
	}
	if strategy == "" {
		strategy = "random"
	}
	return seeds, strategy
}

var (
	switches []SwitchInfo
	mutants  []MutantInfo
)

// RegisterSwitch adds a switch; the package that implements it calls this
// from init. It panics on a duplicate name or a missing or malformed field
// (a programming error caught by any test).
func RegisterSwitch(i SwitchInfo) {
	if knownSwitch(i.Name) {
		panic("model: switch registered twice: " + string(i.Name))
	}
	if !i.Group.Valid() || len(i.Reports) == 0 || i.Scenario == "" || len(i.Invariants) == 0 ||
		i.Reported == "" || i.Fixed == "" || i.Source == "" || i.Mechanism == "" {
		panic("model: switch " + string(i.Name) + " needs a group, reports, source, scenario, invariants, mechanism and both behaviours")
	}
	checkReports(string(i.Name), i.Reports)
	switches = append(switches, i)
	sort.Slice(switches, func(a, b int) bool {
		return catalog.Less(switches[a].Group, string(switches[a].Name), switches[b].Group, string(switches[b].Name))
	})
}

// RegisterMutant adds a mutant; the package that implements it calls this
// from init. It panics on a duplicate name or a missing field.
func RegisterMutant(i MutantInfo) {
	if knownMutant(i.Name) {
		panic("model: mutant registered twice: " + string(i.Name))
	}
	if !i.Group.Valid() || i.Doc == "" || i.Scenario == "" || len(i.Invariants) == 0 {
		panic("model: mutant " + string(i.Name) + " needs a group, doc, scenario and invariants")
	}
	switch i.GateStrategy {
	case "", "random", "swarm", "pct", "commit", "branch":
	default:
		panic("model: mutant " + string(i.Name) + ": unknown gate strategy " + i.GateStrategy)
	}
	mutants = append(mutants, i)
	sort.Slice(mutants, func(a, b int) bool {
		return catalog.Less(mutants[a].Group, string(mutants[a].Name), mutants[b].Group, string(mutants[b].Name))
	})
}

func checkReports(name string, rs []catalog.Report) {
	for _, r := range rs {
		if _, err := catalog.ParseReport(string(r)); err != nil {
			panic("model: switch " + name + ": " + err.Error())
		}
	}
}

// Switches returns every registered switch, in list order (group, name).
func Switches() []SwitchInfo { return switches }

// Mutants returns every registered mutant, in list order (group, name).
func Mutants() []MutantInfo { return mutants }

func init() {
	RegisterSwitch(SwitchInfo{Name: StableTabOwner, Group: catalog.PreviewTab,
		Reports:    []catalog.Report{"t3code#23021"},
		Source:     "seed report 000_993d1fdfc50e8ec7, fix F1",
		Scenario:   "tab-ownership",
		Invariants: []string{"thread-keeps-its-tabs", "thread-regains-its-tabs"},
		Reported:   "tab owner key = environmentId NUL credential providerSessionId NUL threadId",
		Fixed:      "tab owner key = environmentId NUL threadId (durable identity)",
		Script:     "scenarios/testdata/tab_ownership/resume_after_idle_stop",
		Mechanism:  "model/browser: tab owner key"})
	RegisterMutant(MutantInfo{Name: IgnoreTabOwner, Group: catalog.PreviewTab,
		Doc:        "any caller may act on any tab: no owner check, explicit tab ids looked up server-wide",
		Scenario:   "tab-ownership",
		Invariants: []string{"no-cross-thread-tab-action"}})
	RegisterMutant(MutantInfo{Name: RevokeByThread, Group: catalog.MCPCredential,
		Doc:        "a stale session's credential clean-up revokes every credential of the thread, including the replacement's",
		Scenario:   "tab-ownership",
		Invariants: []string{"stale-cleanup-spares-replacement"}})
}

// Profile is the set of fixes and mutants a run uses. The zero Profile is
// the `reported` preset.
type Profile struct {
	fixes   map[Switch]bool
	mutants map[Mutant]bool
	// preset and unfix remember how the profile was named, so that a
	// replay file can record "fixed minus these" as it was asked for.
	preset string
	unfix  []string
}

// Preset names.
const (
	PresetReported = "reported"
	PresetFixed    = "fixed"
	// PresetUpstream is the upstream projects' main branches: every switch
	// whose fix upstream merged (SwitchInfo.Upstream) on, the rest off, so
	// `fuzz --profile upstream` shows which reports are still live there.
	PresetUpstream = "upstream"
)

// Spec names a profile the way the command line and replay files do: a
// preset, then fixes turned on (--fix), then fixes turned off (--unfix),
// then mutants (--mutant). `Spec{Preset: "fixed", Unfix: []string{"x"}}`
// is every fix but x, so that one bug is explored alone.
type Spec struct {
	Preset  string
	Fix     []string
	Unfix   []string
	Mutants []string
}

// Profile builds the profile s names. It returns an error naming the first
// unknown preset, switch or mutant, or a switch named both in Fix and in
// Unfix. Blank names are skipped.
func (s Spec) Profile() (Profile, error) {
	p := Profile{fixes: map[Switch]bool{}, mutants: map[Mutant]bool{}}
	switch s.Preset {
	case PresetReported, "":
		p.preset = PresetReported
	case PresetFixed:
		p.preset = PresetFixed
		for _, sw := range switches {
			p.fixes[sw.Name] = true
		}
	case PresetUpstream:
		p.preset = PresetUpstream
		for _, sw := range switches {
			if sw.Upstream != "" {
				p.fixes[sw.Name] = true
			}
		}
	default:
		return Profile{}, fmt.Errorf("unknown profile %q (want %s, %s or %s)", s.Preset, PresetReported, PresetFixed, PresetUpstream)
	}
	fix, err := switchNames(s.Fix)
	if err != nil {
		return Profile{}, err
	}
	unfix, err := switchNames(s.Unfix)
	if err != nil {
		return Profile{}, err
	}
	for _, f := range fix {
		if slices.Contains(unfix, f) {
			return Profile{}, fmt.Errorf("switch %q is both fixed and unfixed", f)
		}
		p.fixes[Switch(f)] = true
	}
	for _, f := range unfix {
		delete(p.fixes, Switch(f))
	}
	for _, f := range unfix {
		if !slices.Contains(p.unfix, f) {
			p.unfix = append(p.unfix, f)
		}
	}
	sort.Strings(p.unfix)
	for _, m := range s.Mutants {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if !knownMutant(Mutant(m)) {
			return Profile{}, fmt.Errorf("unknown mutant %q (see orchsim list)", m)
		}
		p.mutants[Mutant(m)] = true
	}
	return p, nil
}

// switchNames trims names, drops blanks and checks that each is a
// registered switch.
func switchNames(names []string) ([]string, error) {
	var out []string
	for _, f := range names {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !knownSwitch(Switch(f)) {
			return nil, fmt.Errorf("unknown switch %q (see orchsim list)", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// NewProfile builds a profile from a preset name (reported or fixed), extra
// fixes and mutants: Spec{preset, fixes, nil, mutants}.Profile().
func NewProfile(preset string, fixes []string, mutants []string) (Profile, error) {
	return Spec{Preset: preset, Fix: fixes, Mutants: mutants}.Profile()
}

// MustProfile is NewProfile for tests and tables whose names are constants;
// it panics on an unknown name.
func MustProfile(preset string, fixes []string, mutants []string) Profile {
	return MustSpec(Spec{Preset: preset, Fix: fixes, Mutants: mutants})
}

// MustSpec is Spec.Profile for tests and tables whose names are constants;
// it panics on an unknown name.
func MustSpec(s Spec) Profile {
	p, err := s.Profile()
	if err != nil {
		panic(err)
	}
	return p
}

func knownSwitch(s Switch) bool {
	for _, i := range switches {
		if i.Name == s {
			return true
		}
	}
	return false
}

func knownMutant(m Mutant) bool {
	for _, i := range mutants {
		if i.Name == m {
			return true
		}
	}
	return false
}

// Fixed reports whether the fix s is on.
func (p Profile) Fixed(s Switch) bool { return p.fixes[s] }

// Has reports whether the mutant m is on.
func (p Profile) Has(m Mutant) bool { return p.mutants[m] }

// Fixes returns the fixes that are on, sorted by name (replay files and
// banners record this order, whatever the list order).
func (p Profile) Fixes() []string {
	var out []string
	for _, s := range switches {
		if p.fixes[s.Name] {
			out = append(out, string(s.Name))
		}
	}
	sort.Strings(out)
	return out
}

// MutantNames returns the mutants that are on, sorted by name.
func (p Profile) MutantNames() []string {
	var out []string
	for _, m := range mutants {
		if p.mutants[m.Name] {
			out = append(out, string(m.Name))
		}
	}
	sort.Strings(out)
	return out
}

// Preset returns "fixed" when every fix is on, else "reported". A profile
// built as fixed minus some switches is "reported" with its Fixes listed, so
// that (Preset, Fixes, Mutants) always rebuilds it; Spec keeps how it was
// asked for.
func (p Profile) Preset() string {
	if len(p.Fixes()) == len(switches) && len(switches) > 0 {
		return PresetFixed
	}
	return PresetReported
}

// Unfixed returns the switches the profile turned off after its preset
// (--unfix), sorted. Fixes() already leaves them out; replay files record
// them so that "fixed minus these" reads as it was asked for.
func (p Profile) Unfixed() []string { return p.unfix }

// Spec returns a Spec that builds this profile again, as it was asked for:
// the fixed preset with Unfixed (a switch added later is then on, so a
// replay file recorded as "every fix but x" keeps meaning that), or the
// reported preset with the fixes that are on (also for upstream, whose
// merged set moves as fixes land: a file records what it ran); then the
// mutants.
func (p Profile) Spec() Spec {
	if p.preset == PresetFixed {
		return Spec{Preset: PresetFixed, Unfix: p.Unfixed(), Mutants: p.MutantNames()}
	}
	return Spec{Preset: PresetReported, Fix: p.Fixes(), Mutants: p.MutantNames()}
}

// String renders the profile for banners: reported[+fix...] for a profile
// built up from reported, fixed[~fix...] for every fix but the ones turned
// off (~ marks a fix turned off), upstream[+fix...][~fix...] against the
// merged fixes, then [!mutant...].
func (p Profile) String() string {
	if p.preset == PresetUpstream {
		s := PresetUpstream
		var on, off []string
		for _, sw := range switches {
			switch merged := sw.Upstream != ""; {
			case p.fixes[sw.Name] && !merged:
				on = append(on, string(sw.Name))
			case !p.fixes[sw.Name] && merged:
				off = append(off, string(sw.Name))
			}
		}
		sort.Strings(on)
		sort.Strings(off)
		for _, f := range on {
			s += "+" + f
		}
		for _, f := range off {
			s += "~" + f
		}
		for _, m := range p.MutantNames() {
			s += "!" + m
		}
		return s
	}
	s := p.Preset()
	if p.preset == PresetFixed {
		s = PresetFixed
	}
	if s == PresetReported {
		for _, f := range p.Fixes() {
			s += "+" + f
		}
	} else {
		var off []string
		for _, sw := range switches {
			if !p.fixes[sw.Name] {
				off = append(off, string(sw.Name))
			}
		}
		sort.Strings(off)
		for _, f := range off {
			s += "~" + f
		}
	}
	for _, m := range p.MutantNames() {
		s += "!" + m
	}
	return s
}
