package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// twoHosts: desktop-1 registers at 0, desktop-2 at 10 min (t3code#13051).
func twoHosts() []sim.Event {
	return []sim.Event{
		ev(0, "broker", "host.connect", "", "client=desktop-1", "conn=c1"),
		ev(10, "broker", "host.connect", "", "client=desktop-2", "conn=c2"),
	}
}

func hostRequest(m float64, client, conn, req, thread, tab, explicit, pin string) sim.Event {
	return ev(m, "broker", "host.request", "", "client="+client, "conn="+conn, "request="+req, "thread="+thread,
		"op=evaluate", "tab="+tab, "explicit="+explicit, "budget=14.5s", "deadline=15s", "pin="+pin)
}

// The #13051 story: the session is pinned to desktop-1; the user opens the
// thread's signed-in page in desktop-2; the next evaluate goes to desktop-1.
func TestOwningHost_PinnedToTheOtherHost(t *testing.T) {
	h := append(twoHosts(),
		hostRequest(5, "desktop-1", "c1", "preview-0", "thread-a", "-", "false", "-"),
		ev(20, "host/desktop-2", "host.tab-open", "", "client=desktop-2", "thread=thread-a", "tab=ptab_2"),
		hostRequest(30, "desktop-1", "c1", "preview-1", "thread-a", "-", "false", "desktop-1"))
	v := check(t, PreviewOpOnOwningHost, h)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "request preview-1 (evaluate) of thread thread-a was sent to host desktop-1")
	assert.Contains(t, v.Message, "ptab_2, is held by host desktop-2")
}

// The fix routes it to the tab's holder; near misses: the holder is not
// connected (a typed failure is the fix's answer, and a fallback is not
// judged), a tab of another thread, an explicit tab held by the host, and
// a server restart that closed every connection.
func TestOwningHost_FixAndNearMisses(t *testing.T) {
	tab := ev(20, "host/desktop-2", "host.tab-open", "", "client=desktop-2", "thread=thread-a", "tab=ptab_2")
	assert.Nil(t, check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		hostRequest(30, "desktop-2", "c2", "preview-1", "thread-a", "ptab_2", "false", "desktop-1"))))
	assert.Nil(t, check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		ev(25, "broker", "host.disconnect", "evicted", "client=desktop-2", "conn=c2"),
		hostRequest(30, "desktop-1", "c1", "preview-1", "thread-a", "-", "false", "desktop-1"))))
	assert.Nil(t, check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		hostRequest(30, "desktop-1", "c1", "preview-1", "thread-b", "-", "false", "desktop-1"))))
	assert.Nil(t, check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		ev(22, "host/desktop-1", "host.tab-open", "", "client=desktop-1", "thread=thread-b", "tab=ptab_1"),
		hostRequest(30, "desktop-1", "c1", "preview-1", "thread-a", "ptab_1", "true", "desktop-1"))))
	assert.Nil(t, check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		ev(25, "server", "server.start", "", "incarnation=2"),
		ev(26, "broker", "host.connect", "", "client=desktop-1", "conn=c3"),
		hostRequest(30, "desktop-1", "c3", "preview-1", "thread-a", "-", "false", "-"))))
	// A re-registration of the holder (a new connection) keeps it the holder.
	v := check(t, PreviewOpOnOwningHost, append(twoHosts(), tab,
		ev(25, "broker", "host.disconnect", "evicted", "client=desktop-2", "conn=c2"),
		ev(25.1, "broker", "host.connect", "", "client=desktop-2", "conn=c4"),
		hostRequest(30, "desktop-1", "c1", "preview-1", "thread-a", "-", "false", "desktop-1")))
	require.NotNil(t, v)
}

func missed(m float64, client, conn, req string) sim.Event {
	return ev(m, "broker", "host.deadline-missed", "", "client="+client, "conn="+conn, "request="+req,
		"thread=thread-a", "op=evaluate", "budget=15s", "waited=15s")
}

// The #11167 story: mobile-1 is half-open; thread-a's call times out and
// thread-b's is routed to it again.
func TestNotRechosen_HalfOpenHostRoutedAgain(t *testing.T) {
	h := []sim.Event{
		ev(0, "broker", "host.connect", "", "client=mobile-1", "conn=m1"),
		hostRequest(10, "mobile-1", "m1", "preview-0", "thread-a", "-", "false", "-"),
		missed(10.25, "mobile-1", "m1", "preview-0"),
		hostRequest(12, "mobile-1", "m1", "preview-1", "thread-b", "-", "false", "mobile-1"),
	}
	v := check(t, TimedOutHostNotRechosen, h)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "host mobile-1 (connection m1) left request preview-0")
	assert.Contains(t, v.Message, "request preview-1 (evaluate of thread thread-b) was routed to it")
}

// The fix evicts it; near misses: a late answer shows it alive, a fresh
// registration is a new connection, another host is fine.
func TestNotRechosen_FixAndNearMisses(t *testing.T) {
	base := []sim.Event{
		ev(0, "broker", "host.connect", "", "client=mobile-1", "conn=m1"),
		hostRequest(10, "mobile-1", "m1", "preview-0", "thread-a", "-", "false", "-"),
		missed(10.25, "mobile-1", "m1", "preview-0"),
	}
	with := func(more ...sim.Event) []sim.Event { return append(append([]sim.Event(nil), base...), more...) }
	assert.Nil(t, check(t, TimedOutHostNotRechosen, with(
		ev(10.25, "broker", "host.evict", "", "client=mobile-1", "conn=m1", "request=preview-0"),
		ev(10.25, "broker", "host.disconnect", "evicted", "client=mobile-1", "conn=m1"),
		ev(40, "broker", "host.connect", "", "client=mobile-1", "conn=m2"),
		hostRequest(41, "mobile-1", "m2", "preview-1", "thread-b", "-", "false", "-"))))
	assert.Nil(t, check(t, TimedOutHostNotRechosen, with(
		ev(11, "broker", "host.respond", "", "client=mobile-1", "conn=m1", "request=preview-0"),
		hostRequest(12, "mobile-1", "m1", "preview-1", "thread-b", "-", "false", "mobile-1"))))
	assert.Nil(t, check(t, TimedOutHostNotRechosen, with(
		hostRequest(12, "desktop-1", "c1", "preview-1", "thread-b", "-", "false", "-"))))
}

func budgetRequest(m float64, budget string) sim.Event {
	return ev(m, "broker", "host.request", "", "client=desktop-1", "conn=c1", "request=preview-3", "thread=thread-a",
		"op=waitFor", "tab=-", "explicit=false", "budget="+budget, "deadline=5s", "pin=desktop-1")
}

// The #12407 story: wait_for with timeoutMs 5000 gives the host 5 s and the
// broker evicts it at 5 s.
func TestEvictedPastBudget_SameTimeoutBothWays(t *testing.T) {
	h := []sim.Event{budgetRequest(10, "5s"),
		ev(10+5.0/60, "broker", "host.evict", "", "client=desktop-1", "conn=c1", "request=preview-3")}
	v := check(t, HostEvictedOnlyPastItsBudget, h)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "with a host wait budget of 5s: it waited 5s")
}

// The fix gives the host 4.5 s; near misses: an answered request is never
// judged, an eviction of another connection's request is not this one.
func TestEvictedPastBudget_FixAndNearMisses(t *testing.T) {
	evict := ev(10+5.0/60, "broker", "host.evict", "", "client=desktop-1", "conn=c1", "request=preview-3")
	assert.Nil(t, check(t, HostEvictedOnlyPastItsBudget, []sim.Event{budgetRequest(10, "4.5s"), evict}))
	assert.Nil(t, check(t, HostEvictedOnlyPastItsBudget, []sim.Event{budgetRequest(10, "5s"),
		ev(10.05, "broker", "host.respond", "", "client=desktop-1", "conn=c1", "request=preview-3"), evict}))
	assert.Nil(t, check(t, HostEvictedOnlyPastItsBudget, []sim.Event{budgetRequest(10, "5s"),
		ev(10+5.0/60, "broker", "host.evict", "", "client=desktop-1", "conn=c9", "request=preview-3")}))
}

// The #6355 story: desktop-1 is awake, the thread's tab lost its control
// session, the evaluate stalls past the deadline. Near misses: a suspended
// host (the half-open case is timed-out-host-not-rechosen's), a host that
// resumed and then missed one (judged again).
func TestAnswersInTime(t *testing.T) {
	stall := missed(10.25, "desktop-1", "c1", "preview-0")
	v := check(t, LiveHostAnswersInTime, []sim.Event{
		ev(0, "broker", "host.connect", "", "client=desktop-1", "conn=c1"),
		ev(5, "host/desktop-1", "host.thread-leave", "", "client=desktop-1", "thread=thread-a"),
		hostRequest(10, "desktop-1", "c1", "preview-0", "thread-a", "ptab_1", "false", "desktop-1"), stall})
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "host desktop-1 (connection c1), awake and reading, let the deadline of request preview-0")
	assert.Nil(t, check(t, LiveHostAnswersInTime, []sim.Event{
		ev(5, "host/desktop-1", "host.suspend", "", "client=desktop-1"), stall}))
	assert.NotNil(t, check(t, LiveHostAnswersInTime, []sim.Event{
		ev(5, "host/desktop-1", "host.suspend", "", "client=desktop-1"),
		ev(6, "host/desktop-1", "host.resume", "", "client=desktop-1"), stall}))
	assert.Nil(t, check(t, LiveHostAnswersInTime, []sim.Event{
		ev(0, "broker", "host.connect", "", "client=desktop-1", "conn=c1"),
		hostRequest(10, "desktop-1", "c1", "preview-0", "thread-a", "ptab_1", "false", "desktop-1"),
		ev(10.01, "broker", "host.respond", "", "client=desktop-1", "conn=c1", "request=preview-0")}))
}
