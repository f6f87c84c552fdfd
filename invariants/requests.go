package invariants

import (
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Request invariants (report 002_37023b8e7fbf41be, T3 Code #16184; MODEL.md
// §13). They read the orchestrator tool events the server traces: actor
// agent/<thread>, kind = tool, attrs thread (from the credential), cred,
// clientRequestId ("-" for none), command, result, effect (what an accepted
// command did), and for t3_thread_update target and action; outcome
// accepted (a new command ran), replayed (a receipt was replayed) or an
// error code.
const (
	OneEffectPerRequest        = "one-effect-per-request"
	RetryReturnsOriginal       = "retry-returns-original"
	RequestKeysScopedPerThread = "request-keys-scoped-per-thread"
)

func init() {
	register(Info{Name: OneEffectPerRequest, Group: catalog.Orchestrator,
		Property: "per thread, tool and clientRequestId at most one command runs (one child thread, task, message, schedule or interrupt), across restarts and credential re-issues",
		Source:   "002_37023b8e7fbf41be (T3 Code #16184) restoration check",
		Reports:  []catalog.Report{"t3code#16184"},
		New:      func() sim.Checker { return newOneEffect() }})
	register(Info{Name: RetryReturnsOriginal, Group: catalog.Orchestrator,
		Property: "a retry with the same clientRequestId returns the first call's ids (taskId, childThreadId, threads, message, schedule)",
		Source:   "002_37023b8e7fbf41be restoration check; FIDELITY OM-05, OM-10, OM-14",
		Reports:  []catalog.Report{"t3code#16184"},
		New:      func() sim.Checker { return &retryOriginal{first: map[string]string{}} }})
	register(Info{Name: RequestKeysScopedPerThread, Group: catalog.Orchestrator,
		Property: "the same clientRequestId in two threads is independent work, and a key new to a thread starts a new round: a receipt is only ever replayed to the thread that created it, for the same request",
		Source:   "002_37023b8e7fbf41be controls; MODEL.md §13 N1 safety",
		Reports:  []catalog.Report{"t3code#16184"},
		New:      func() sim.Checker { return &keysScoped{owner: map[string]string{}} }})
}

// isOrchestratorTool reports whether kind is one of orchestratorToolKinds
// (a switch, not a map lookup: every request checker asks it per event;
// TestIsOrchestratorTool_MatchesKinds holds the two equal).
func isOrchestratorTool(kind string) bool {
	switch kind {
	case "delegate_task", "create_threads", "schedule_task",
		"t3_thread_send", "t3_thread_update", "t3_thread_interrupt", "task_cancel":
		return true
	}
	return false
}

// orchestratorToolKinds are the orchestrator tools' kinds, in a fixed
// order, for the checkers' declared kinds (sim.KindObserver).
var orchestratorToolKinds = []string{"delegate_task", "create_threads", "schedule_task",
	"t3_thread_send", "t3_thread_update", "t3_thread_interrupt", "task_cancel"}

// requestKey partitions requests: (caller thread, tool, clientRequestId),
// plus target and action for t3_thread_update, whose command id includes
// them. Calls without a clientRequestId are not idempotent by design and
// have no key.
func requestKey(ev *sim.Event) (string, bool) {
	if !isToolEvent(ev) || !isOrchestratorTool(ev.Kind) {
		return "", false
	}
	key := ev.Get("clientRequestId")
	if key == "" || key == "-" {
		return "", false
	}
	parts := []string{ev.Get("thread"), ev.Kind, key}
	if ev.Kind == "t3_thread_update" {
		parts = append(parts, ev.Get("target"), ev.Get("action"))
	}
	return strings.Join(parts, " "), true
}

// appendRequestKey appends requestKey(ev) to buf: a checker looks it up as
// m[string(k)], which does not allocate, and allocates the string only to
// insert it.
func appendRequestKey(buf []byte, ev *sim.Event) ([]byte, bool) {
	if !isToolEvent(ev) || !isOrchestratorTool(ev.Kind) {
		return buf, false
	}
	key := ev.Get("clientRequestId")
	if key == "" || key == "-" {
		return buf, false
	}
	buf = append(append(append(append(append(buf, ev.Get("thread")...), ' '), ev.Kind...), ' '), key...)
	if ev.Kind == "t3_thread_update" {
		buf = append(append(append(append(buf, ' '), ev.Get("target")...), ' '), ev.Get("action")...)
	}
	return buf, true
}

type execution struct {
	at      time.Duration
	cred    string
	command string
}

type oneEffect struct {
	kb    []byte      // the request key's scratch
	str   sim.Strings // the keys of first
	first map[string]execution
	// lastReissue says, per thread, what last replaced its credential.
	lastReissue map[string]string
	// releaseReason maps a session incarnation to why it was released.
	releaseReason map[string]string
	restarts      int
}

func newOneEffect() *oneEffect {
	return &oneEffect{first: map[string]execution{}, lastReissue: map[string]string{}, releaseReason: map[string]string{}}
}

func (*oneEffect) Name() string { return OneEffectPerRequest }

// ObservedKinds implements sim.KindObserver.
func (*oneEffect) ObservedKinds() []string { return oneEffectKinds }

var oneEffectKinds = joinKinds([]string{"session.release", "server.start", "credential.revoke", "credential.expire"}, orchestratorToolKinds)

// reissuePath names a credential re-issue cause the way the report does.
func reissuePath(releaseReason string) string {
	switch releaseReason {
	case "idle_timeout":
		return "idle release and resume"
	case "runtime_error":
		return "provider crash and restart"
	case "manual_shutdown":
		return "detach and re-attach (capability change)"
	case "server_shutdown":
		return "server restart"
	}
	return releaseReason
}

func (o *oneEffect) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "session.release":
		o.releaseReason[ev.Get("incarnation")] = ev.Get("reason")
	case "server.start":
		// A restart re-issues every credential: it is now the last cause
		// for every thread until a later revoke says otherwise.
		if o.restarts++; o.restarts > 1 {
			clear(o.lastReissue)
		}
	case "credential.revoke", "credential.expire":
		thread := ev.Get("thread")
		cause := ev.Get("cause")
		switch {
		case ev.Kind == "credential.expire":
			o.lastReissue[thread] = "24 h liveness expiry"
		case strings.HasPrefix(cause, "cleanup:"):
			o.lastReissue[thread] = reissuePath(o.releaseReason[strings.TrimPrefix(cause, "cleanup:")])
		case strings.HasPrefix(cause, "prepare:"):
			o.lastReissue[thread] = "capability or instance change"
		}
	}
	if ev.Outcome != "accepted" || ev.Get("effect") == "dispose" {
		// Disposing a completion delivery creates nothing; a repeat is benign.
		return nil
	}
	k, ok := appendRequestKey(o.kb[:0], ev)
	o.kb = k
	if !ok {
		return nil
	}
	e := execution{at: ev.At, cred: ev.Get("cred"), command: ev.Get("command")}
	prev, seen := o.first[string(k)]
	if !seen {
		o.first[o.str.Bytes(k)] = e
		return nil
	}
	path := o.lastReissue[ev.Get("thread")]
	if path == "" && o.restarts > 1 {
		path = "server restart"
	}
	if path == "" {
		path = "no re-issue seen"
	}
	why := "credential re-issued by " + path
	if prev.command == e.command {
		// The same command id: the key's receipts were found, and the call
		// still ran new work (a batch reused with more entries).
		why = "the same command id: its receipt was found, yet the call ran new work"
	}
	return violation(OneEffectPerRequest,
		"thread %s ran %s with clientRequestId %q twice: first as %s with credential %s at %s, again as %s with credential %s at %s (%s)",
		ev.Get("thread"), ev.Kind, ev.Get("clientRequestId"), prev.command, prev.cred, at(prev.at), e.command, e.cred, at(e.at), why)
}

type retryOriginal struct {
	kb    []byte            // the request key's scratch
	str   sim.Strings       // the keys of first
	first map[string]string // request key -> result of the first execution
}

func (*retryOriginal) Name() string { return RetryReturnsOriginal }

// ObservedKinds implements sim.KindObserver.
func (*retryOriginal) ObservedKinds() []string { return retryOriginalKinds }

var retryOriginalKinds = orchestratorToolKinds

func (r *retryOriginal) Observe(ev *sim.Event) *sim.Violation {
	if ev.Outcome != "accepted" && ev.Outcome != "replayed" {
		return nil
	}
	k, ok := appendRequestKey(r.kb[:0], ev)
	r.kb = k
	if !ok {
		return nil
	}
	res := ev.Get("result")
	first, seen := r.first[string(k)]
	if !seen {
		r.first[r.str.Bytes(k)] = res
		return nil
	}
	if res == first {
		return nil
	}
	return violation(RetryReturnsOriginal,
		"thread %s retried %s with clientRequestId %q (credential %s) at %s and got %q; the first call returned %q",
		ev.Get("thread"), ev.Kind, ev.Get("clientRequestId"), ev.Get("cred"), at(ev.At), res, first)
}

type keysScoped struct {
	owner map[string]string // command -> request key that created it
	kb    []byte            // the key's scratch
	str   sim.Strings       // the values of owner
}

func (*keysScoped) Name() string { return RequestKeysScopedPerThread }

// ObservedKinds implements sim.KindObserver.
func (*keysScoped) ObservedKinds() []string { return keysScopedKinds }

var keysScopedKinds = orchestratorToolKinds

// key is ev's request key, or "thread tool -" for a call without one.
func (s *keysScoped) key(ev *sim.Event) string {
	if k, ok := requestKey(ev); ok {
		return k
	}
	return ev.Get("thread") + " " + ev.Kind + " -"
}

// appendKey appends key(ev) to buf (compared as string(k) without
// allocating; copied into str only to be kept).
func (s *keysScoped) appendKey(buf []byte, ev *sim.Event) []byte {
	if k, ok := appendRequestKey(buf, ev); ok {
		return k
	}
	return append(append(append(buf, ev.Get("thread")...), ' '), ev.Kind+" -"...)
}

func (s *keysScoped) Observe(ev *sim.Event) *sim.Violation {
	if !isToolEvent(ev) || !isOrchestratorTool(ev.Kind) {
		return nil
	}
	cmd := ev.Get("command")
	switch ev.Outcome {
	case "accepted":
		if _, ok := s.owner[cmd]; !ok {
			s.kb = s.appendKey(s.kb[:0], ev)
			s.owner[cmd] = s.str.Bytes(s.kb)
		}
	case "replayed":
		s.kb = s.appendKey(s.kb[:0], ev)
		orig, ok := s.owner[cmd]
		if !ok || orig == string(s.kb) {
			return nil
		}
		return violation(RequestKeysScopedPerThread,
			"%s from thread %s with clientRequestId %q (credential %s) at %s replayed %s, which request [%s] created: keys leaked across callers",
			ev.Kind, ev.Get("thread"), ev.Get("clientRequestId"), ev.Get("cred"), at(ev.At), cmd, orig)
	}
	return nil
}

// ReplayLandsOnTarget is written from the receipt contract PR #5246 states
// for the engine and the orchestrator tools' descriptions repeat for a
// clientRequestId ("a retry returns the original result"): a success
// answer means the effect exists on what the call addressed. A receipt
// replayed to a call that addresses another thread or task reports a
// delivery that never happened (t3code#5231).
const ReplayLandsOnTarget = "replay-lands-on-target"

func init() {
	register(Info{Name: ReplayLandsOnTarget, Group: catalog.Orchestrator,
		Property: "a command receipt is replayed as success only to a call addressed to the thread or task the original command acted on",
		Source:   "OrchestrationEngine receipts (aggregateKind/aggregateId), PR #5246; orchestrator tool descriptions (clientRequestId retries)",
		Reports:  []catalog.Report{"t3code#5231"},
		New:      func() sim.Checker { return &landsOnTarget{addressed: map[string]addressed{}} }})
}

// addressed is what an accepted command acted on, and when.
type addressed struct {
	target target
	at     time.Duration
}

type landsOnTarget struct {
	addressed map[string]addressed // command id -> the original's target
}

func (*landsOnTarget) Name() string { return ReplayLandsOnTarget }

// ObservedKinds implements sim.KindObserver.
func (*landsOnTarget) ObservedKinds() []string { return landsOnTargetKinds }

var landsOnTargetKinds = orchestratorToolKinds

// targetOf is what a tool event addresses: its target thread or task ("" for
// a call that addresses only its caller).
func targetOf(ev *sim.Event) string {
	if t := ev.Get("target"); t != "" {
		return "thread " + t
	}
	if t := ev.Get("task"); t != "" && ev.Kind == "task_cancel" {
		return "task " + t
	}
	return ""
}

// target is targetOf(ev) without its string built: the kind of what the
// event addresses (targetNone, targetThread, targetTask) and its id. The
// request checkers keep one per command and compare it to later calls;
// TestTarget_MatchesTargetOf holds it to targetOf and isTargetOf.
type target struct {
	kind uint8
	id   string
}

const (
	targetNone uint8 = iota
	targetThread
	targetTask
)

// targetIn is targetOf(ev) as a target.
func targetIn(ev *sim.Event) target {
	if t := ev.Get("target"); t != "" {
		return target{targetThread, t}
	}
	if t := ev.Get("task"); t != "" && ev.Kind == "task_cancel" {
		return target{targetTask, t}
	}
	return target{}
}

// String is targetOf's string: "thread ID", "task ID" or "".
func (t target) String() string {
	switch t.kind {
	case targetThread:
		return "thread " + t.id
	case targetTask:
		return "task " + t.id
	}
	return ""
}

// of reports whether t is what ev addresses: targetIn(ev) == t.
func (t target) of(ev *sim.Event) bool { return targetIn(ev) == t }

// isTargetOf reports whether target == targetOf(ev), without building
// targetOf's string.
func isTargetOf(target string, ev *sim.Event) bool {
	if t := ev.Get("target"); t != "" {
		rest, ok := strings.CutPrefix(target, "thread ")
		return ok && rest == t
	}
	if t := ev.Get("task"); t != "" && ev.Kind == "task_cancel" {
		rest, ok := strings.CutPrefix(target, "task ")
		return ok && rest == t
	}
	return target == ""
}

func (l *landsOnTarget) Observe(ev *sim.Event) *sim.Violation {
	if !isToolEvent(ev) || !isOrchestratorTool(ev.Kind) {
		return nil
	}
	cmd := ev.Get("command")
	switch ev.Outcome {
	case "accepted":
		if _, ok := l.addressed[cmd]; !ok && cmd != "" {
			l.addressed[cmd] = addressed{target: targetIn(ev), at: ev.At}
		}
	case "replayed":
		orig, ok := l.addressed[cmd]
		if !ok || orig.target.of(ev) {
			return nil
		}
		return violation(ReplayLandsOnTarget,
			"%s from thread %s with clientRequestId %q addressed %s at %s and was answered replayed (success) with %s, which acted on %s at %s: nothing reached %s",
			ev.Kind, ev.Get("thread"), ev.Get("clientRequestId"), orNone(targetOf(ev)), at(ev.At), cmd, orNone(orig.target.String()), at(orig.at), orNone(targetOf(ev)))
	}
	return nil
}
