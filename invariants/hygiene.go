package invariants

import (
	"strings"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Invariants of the preview host and the credential registry beyond the
// seed reports (MODEL.md §4, §9): the idle sweep's exemptions and the
// capability set a credential carries. They guard against plausible wrong
// fixes (the sweep-ignores-viewers and reuse-ignores-capabilities mutants).
const (
	SweepSparesWatchedTabs        = "sweep-spares-watched-tabs"
	CredentialCapabilitiesCurrent = "credential-capabilities-current"
)

func init() {
	register(Info{Name: SweepSparesWatchedTabs, Group: catalog.PreviewTab,
		Property: "the 1 min idle sweep never closes a tab a viewer is watching or the desktop app renders",
		Source:   "MODEL.md §9 (ServerBrowser idle sweep); report 000 on desktop-backed tabs",
		New:      func() sim.Checker { return &sweepSpares{watchers: map[string]int{}, desktop: map[string]bool{}} }})
	register(Info{Name: CredentialCapabilitiesCurrent, Group: catalog.MCPCredential,
		Property: "a credential issued or reused for a thread carries preview exactly when the thread's project has browser access",
		Source:   "MODEL.md §4 (prepareMcpSession capability equality, PR #7083)",
		New:      func() sim.Checker { return &capsCurrent{project: map[string]string{}, access: map[string]bool{}} }})
}

type sweepSpares struct {
	watchers map[string]int
	desktop  map[string]bool
}

func (*sweepSpares) Name() string { return SweepSparesWatchedTabs }

// ObservedKinds implements sim.KindObserver.
func (*sweepSpares) ObservedKinds() []string { return sweepSparesKinds }

var sweepSparesKinds = []string{"viewer.attach", "viewer.detach", "tab.render", "server.start", "tab.swept"}

func (s *sweepSpares) Observe(ev *sim.Event) *sim.Violation {
	tab := ev.Get("tab")
	switch ev.Kind {
	case "viewer.attach":
		s.watchers[tab]++
	case "viewer.detach":
		s.watchers[tab]--
	case "tab.render":
		s.desktop[tab] = true
	case "server.start":
		clear(s.watchers)
		clear(s.desktop)
	case "tab.swept":
		if s.watchers[tab] > 0 || s.desktop[tab] {
			why := "watched"
			if s.desktop[tab] {
				why = "rendered by the desktop app"
			}
			return violation(SweepSparesWatchedTabs, "the idle sweep closed tab %s of thread %s at %s although it was %s",
				tab, ev.Get("thread"), at(ev.At), why)
		}
	}
	return nil
}

type capsCurrent struct {
	project map[string]string // thread -> project
	access  map[string]bool   // project -> browser access
}

func (*capsCurrent) Name() string { return CredentialCapabilitiesCurrent }

// ObservedKinds implements sim.KindObserver.
func (*capsCurrent) ObservedKinds() []string { return capsCurrentKinds }

var capsCurrentKinds = []string{"thread", "settings.browser-access", "credential.issue", "credential.reuse"}

func (c *capsCurrent) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "world" && ev.Kind == "thread":
		c.project[ev.Get("thread")] = ev.Get("project")
		c.access[ev.Get("project")] = ev.Get("browser-access") != "false"
	case ev.Kind == "settings.browser-access":
		c.access[ev.Get("project")] = ev.Outcome == "true"
	case ev.Kind == "credential.issue" || ev.Kind == "credential.reuse":
		proj, known := c.project[ev.Get("thread")]
		if !known {
			return nil
		}
		has := strings.Contains(ev.Get("caps"), "preview")
		if has != c.access[proj] {
			return violation(CredentialCapabilitiesCurrent,
				"%s of credential %s for thread %s at %s carries %s, but browser access of %s is %v",
				ev.Kind, ev.Get("cred"), ev.Get("thread"), at(ev.At), ev.Get("caps"), proj, c.access[proj])
		}
	}
	return nil
}
