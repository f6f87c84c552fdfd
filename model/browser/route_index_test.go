package browser

import (
	"testing"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
	"pgregory.net/rapid"
)

// route's ranked hosts and tabHolder's per-thread records answer what the
// scans they replaced answered (the best host of the environment that
// supports the operation, by number of operations, focus and focus
// recency; the thread's last reported tab, or the named one), over any
// sequence of hosts connecting (a clientId again replaces its host),
// disconnecting, gaining and losing focus (also with a stale connection
// id), reporting tabs, invoking (which assigns keys to hosts) and the
// broker dying; and each host's count of assignments is the number of
// assignments that name it (drop walks the assignments only when it is
// not zero), none naming a closed host.
func TestBrokerIndexes_MatchScans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := sim.NewKernel(false)
		env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false), Profile: model.MustProfile("fixed", nil, nil),
			EnvironmentID: "e1"}
		b := NewBroker(env)
		clients := rapid.SampledFrom([]string{"c1", "c2", "c3", "c4", "c5"})
		envs := rapid.SampledFrom([]string{"e1", "e2"})
		threads := rapid.SampledFrom([]string{"t1", "t2", "t3"})
		tabs := rapid.SampledFrom([]string{"tab1", "tab2", "tab3", "tab4"})
		opSets := [][]string{nil, {OpOpen}, {OpOpen, OpNavigate}, {OpNavigate, OpSnapshot, OpClick}}
		ops := []string{OpOpen, OpNavigate, OpSnapshot, OpClick, OpRecordingStart}
		scanRoute := func(envID, op string) *Host {
			var best *Host
			for _, h := range b.hosts {
				if h.EnvironmentID != envID || !h.supports(op) {
					continue
				}
				if best == nil || better(h, best) {
					best = h
				}
			}
			return best
		}
		scanHolder := func(envID, thread, tab string) (string, string) {
			var best *tabRecord
			for i := range b.tabs {
				r := &b.tabs[i]
				if r.env != envID || r.thread != thread || tab != "" && r.tab != tab {
					continue
				}
				if best == nil || r.opened >= best.opened {
					best = r
				}
			}
			if best == nil {
				return "", ""
			}
			return best.tab, best.client
		}
		for i := range rapid.IntRange(0, 80).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 12).Draw(t, "op"); {
			case op <= 3:
				b.dead = false
				b.Connect(clients.Draw(t, "client"), envs.Draw(t, "env"), opSets[rapid.IntRange(0, len(opSets)-1).Draw(t, "ops")])
			case op == 4 && len(b.hosts) > 0:
				b.Disconnect(b.hosts[rapid.IntRange(0, len(b.hosts)-1).Draw(t, "gone")])
			case op <= 6 && len(b.hosts) > 0:
				h := b.hosts[rapid.IntRange(0, len(b.hosts)-1).Draw(t, "focused")]
				conn := h.ConnectionID
				if rapid.IntRange(0, 4).Draw(t, "stale") == 0 {
					conn = "stale"
				}
				b.Focus(h.ClientID, h.EnvironmentID, conn, rapid.Bool().Draw(t, "on"))
			case op <= 9:
				k.RunUntil(k.Elapsed() + time.Duration(rapid.IntRange(0, 2).Draw(t, "later"))*time.Second)
				b.ReportTab(clients.Draw(t, "holder"), envs.Draw(t, "tab env"), threads.Draw(t, "thread"), tabs.Draw(t, "tab"), k.Elapsed())
			case op == 10:
				b.Kill()
			case op == 11:
				s := BrokerScope{EnvironmentID: envs.Draw(t, "invoke env"), ThreadID: threads.Draw(t, "invoke thread"),
					ProviderSessionID: clients.Draw(t, "session")}
				b.Invoke(s, ops[rapid.IntRange(0, len(ops)-1).Draw(t, "invoke op")], BrokerInput{}, "", 0, func(BrokerResult, *BrokerError) {})
			}
			count := map[*Host]int{}
			for _, a := range b.assignments {
				count[a.host]++
				if a.host.closed {
					t.Fatalf("step %d: assignment %q names closed host %s", i, a.key, a.host.ConnectionID)
				}
			}
			for _, h := range b.hosts {
				if h.assigned != count[h] {
					t.Fatalf("step %d: host %s counts %d assignments, %d name it", i, h.ConnectionID, h.assigned, count[h])
				}
			}
			for _, e := range []string{"e1", "e2", "e3"} {
				for _, o := range ops {
					if got, _ := b.route("no assignment", BrokerScope{EnvironmentID: e}, o); got != scanRoute(e, o) {
						t.Fatalf("step %d: route(%s, %s) = %v, the scan finds %v", i, e, o, got, scanRoute(e, o))
					}
				}
				for _, th := range []string{"t1", "t2", "t3"} {
					for _, tab := range []string{"", "tab1", "tab2", "tab3", "tab4"} {
						gt, gc := b.tabHolder(e, th, tab)
						if wt, wc := scanHolder(e, th, tab); gt != wt || gc != wc {
							t.Fatalf("step %d: tabHolder(%s, %s, %q) = %s on %s, the scan finds %s on %s", i, e, th, tab, gt, gc, wt, wc)
						}
					}
				}
			}
		}
	})
}
