package invariants

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Delegation invariants, written from delegate_task's contract: its tool
// description (PR #7427) tells the caller to keep the taskId a wait
// returns and to use task_status when it needs the result, "the child keeps
// running"; that only works if the taskId reaches the caller. They read the
// server's delegate_task events (agent/<thread>, mode, result task=...),
// the orchestrator's delegate_task.wait and the caller's MCP client
// timeouts (mcp-client/<thread> timeout tool=...).
const DelegateHandleBeforeClientTimeout = "delegate-handle-before-client-timeout"

func init() {
	register(Info{Name: DelegateHandleBeforeClientTimeout, Group: catalog.Orchestrator,
		Property: "a delegate_task the server accepted returns its taskId before the caller's MCP client gives up: no client-side timeout ends a call whose task exists and whose wait is still holding the answer",
		Source:   "delegate_task tool description (PR #7427: keep the taskId, use task_status); PR #11997",
		Reports:  []catalog.Report{"t3code#11168"},
		New:      func() sim.Checker { return &handleBeforeTimeout{} }})
}

// heldWait is a wait-mode delegate_task the server accepted and has not
// answered yet.
type heldWait struct {
	thread, task, key string
	since             time.Duration
}

type handleBeforeTimeout struct {
	held []heldWait // a few at a time; a slice keeps the checker free of map ranges
}

func (*handleBeforeTimeout) Name() string { return DelegateHandleBeforeClientTimeout }

// ObservedKinds implements sim.KindObserver.
func (*handleBeforeTimeout) ObservedKinds() []string { return handleBeforeTimeoutKinds }

var handleBeforeTimeoutKinds = []string{"server.start", "delegate_task", "delegate_task.wait", "timeout"}

func (h *handleBeforeTimeout) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		h.held = h.held[:0] // the waits died with their process
	case isToolEvent(ev) && ev.Kind == "delegate_task" && ev.Get("mode") == "wait" &&
		(ev.Outcome == "accepted" || ev.Outcome == "replayed"):
		if task := resultField(ev.Get("result"), "task"); task != "" {
			h.held = append(h.held, heldWait{thread: ev.Get("thread"), task: task, key: ev.Get("clientRequestId"), since: ev.At})
		}
	case ev.Actor == "orchestrator" && ev.Kind == "delegate_task.wait":
		thread, task := ev.Get("thread"), ev.Get("task")
		for i, w := range h.held {
			if w.thread == thread && w.task == task {
				h.held = append(h.held[:i], h.held[i+1:]...)
				break
			}
		}
	case ev.Kind == "timeout" && ev.Get("tool") == "delegate_task" && strings.HasPrefix(ev.Actor, "mcp-client/"):
		thread := strings.TrimPrefix(ev.Actor, "mcp-client/")
		for _, w := range h.held {
			if w.thread == thread {
				return violation(DelegateHandleBeforeClientTimeout,
					"thread %s's MCP client gave up on delegate_task (clientRequestId %s) at %s, %s after the server accepted it and created task %s at %s: the wait was still holding the answer, so the caller has no taskId for task_status and a re-dispatch starts a second child",
					thread, w.key, at(ev.At), ev.At-w.since, w.task, at(w.since))
			}
		}
	}
	return nil
}

// resultField returns the value of name in a result attribute
// ("task=X child=Y ..."): of the first field, split as strings.Fields
// splits, that is name=VALUE. For a name of ASCII bytes other than spaces
// and a result ASCII up to that field's end (every one the models write),
// the field is the earliest occurrence of name at a field's start (the
// start or after an ASCII space) followed by '=', found by strings.Index,
// and its value is scanned eight bytes at a time; any other goes through
// resultFieldSlow, the definition (TestResultField_MatchesFields).
func resultField(result, name string) string {
	if name == "" || !asciiWord(name) {
		return resultFieldSlow(result, name)
	}
	for from := 0; from < len(result); {
		i := strings.Index(result[from:], name)
		if i < 0 {
			break
		}
		i += from
		end := i + len(name)
		if i > 0 && result[i-1] >= utf8.RuneSelf {
			return resultFieldSlow(result, name) // perhaps a Unicode space
		}
		if (i == 0 || asciiSpace[result[i-1]]) && end < len(result) && result[end] == '=' {
			if !isASCII(result[:i]) {
				return resultFieldSlow(result, name)
			}
			j, ok := fieldEnd(result, end+1)
			if !ok {
				return resultFieldSlow(result, name)
			}
			return result[end+1 : j]
		}
		from = i + 1
	}
	if !isASCII(result) {
		return resultFieldSlow(result, name)
	}
	return ""
}

// fieldEnd returns the index of the first ASCII space in s at or after
// from (len(s) if none), and false if a non-ASCII byte comes before it.
// Words of eight bytes each above ' ' and below utf8.RuneSelf are skipped
// whole.
func fieldEnd(s string, from int) (int, bool) {
	j := from
	for ; j+8 <= len(s); j += 8 {
		w := uint64(s[j]) | uint64(s[j+1])<<8 | uint64(s[j+2])<<16 | uint64(s[j+3])<<24 |
			uint64(s[j+4])<<32 | uint64(s[j+5])<<40 | uint64(s[j+6])<<48 | uint64(s[j+7])<<56
		// A byte >= 0x80, or (all below 0x80) a byte below 0x21: look
		// at this word byte by byte.
		if w&0x8080808080808080 != 0 || (w-0x2121212121212121)&^w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; j < len(s); j++ {
		switch c := s[j]; {
		case c >= utf8.RuneSelf:
			return j, false
		case asciiSpace[c]:
			return j, true
		}
	}
	return j, true
}

// asciiWord reports whether s is ASCII with no byte strings.Fields splits at.
func asciiWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || asciiSpace[c] {
			return false
		}
	}
	return true
}

// isASCII reports whether every byte of s is below utf8.RuneSelf, eight
// at a time.
func isASCII(s string) bool {
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiSpace holds the ASCII bytes unicode.IsSpace (and so strings.Fields)
// splits at.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// resultFieldSlow is resultField's definition.
func resultFieldSlow(result, name string) string {
	for f := range strings.FieldsSeq(result) {
		if v, ok := strings.CutPrefix(f, name); ok && strings.HasPrefix(v, "=") {
			return v[1:]
		}
	}
	return ""
}

// OneLiveChildPerRequest is written from the same contract (PR #7427: "the
// child keeps running ... use task_status"): one piece of delegated work
// has one live child. An agent that dispatches a task's work again while
// that task still runs has two children doing it (coder/xum#2098; the
// duplicate child of t3code#11168). It reads delegate_task's redispatch-of
// attribute and the orchestrator's task.settled.
const OneLiveChildPerRequest = "one-live-child-per-request"

func init() {
	register(Info{Name: OneLiveChildPerRequest, Group: catalog.Orchestrator,
		Property: "a delegated task's work is never dispatched again while the task still runs",
		Source:   "delegate_task tool description (PR #7427: the child keeps running; keep the taskId)",
		Reports:  []catalog.Report{"coder/xum#2098", "t3code#11168"},
		New:      func() sim.Checker { return &liveChild{running: map[string]time.Duration{}} }})
}

type liveChild struct {
	running map[string]time.Duration // task -> accepted at
}

func (*liveChild) Name() string { return OneLiveChildPerRequest }

// ObservedKinds implements sim.KindObserver.
func (*liveChild) ObservedKinds() []string { return liveChildKinds }

var liveChildKinds = []string{"task.settled", "delegate_task"}

func (l *liveChild) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "orchestrator" && ev.Kind == "task.settled":
		delete(l.running, ev.Get("task"))
	case isToolEvent(ev) && ev.Kind == "delegate_task" && ev.Outcome == "accepted":
		task := resultField(ev.Get("result"), "task")
		if of := ev.Get("redispatch-of"); of != "" {
			if since, live := l.running[of]; live {
				return violation(OneLiveChildPerRequest,
					"thread %s dispatched task %s's work again at %s as %s while %s, accepted at %s, still runs: two live children for one request",
					ev.Get("thread"), of, at(ev.At), task, of, at(since))
			}
		}
		if task != "" {
			if _, seen := l.running[task]; !seen {
				l.running[task] = ev.At
			}
		}
	}
	return nil
}
