package invariants

import (
	"slices"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// The probe counter's main, terminal and toolCall as they were before they
// switched on the event's kind (probes_fast_test.go holds the two forms
// equal).

func (p *ProbeCounter) refMain(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "server.start":
		p.liveSessions = 0 // sessions die with their process
	case ev.Actor == "psm" && ev.Kind == "session.opened":
		p.liveSessions++
	case ev.Actor == "psm" && ev.Kind == "session.release":
		p.liveSessions = max(0, p.liveSessions-1)
	}
	switch {
	case ev.Kind == "server.start":
		if p.starts > 0 && p.openTasks > 0 {
			hit(probeRestartWithRunningTask)
		}
		if len(p.stopping) > 0 {
			hit(probeRestartWhileStopping)
			p.stopping = p.stopping[:0]
		}
		p.starts++
		p.resetTabs()
	case ev.Kind == "credential.revoke" && strings.HasPrefix(ev.Get("cause"), "prepare:"):
		hit(probeCapabilityChangeReissuedCredential)
	case ev.Kind == "delegate_task.wait" && ev.Outcome == "waitTimedOut":
		hit(probeDelegateWaitTimedOut)
	case ev.Kind == "delivery.offer" && ev.Get("generation") != "1":
		hit(probeDeliverySuccessor)
	case ev.Kind == "delivery.resume":
		hit(probeDeliveryAcrossRestart)
	case ev.Kind == "credential.issue":
		has := strings.Contains(ev.Get("caps"), "preview")
		if p.preview[ev.Get("thread")] && !has {
			hit(probeIssueAfterAccessWithdrawn)
		}
		p.preview[ev.Get("thread")] = has
	case ev.Kind == "session.release" && ev.Get("reason") == "runtime_restart":
		p.replaced[ev.Get("incarnation")] = true
	case ev.Kind == "credential.cleanup" && p.replaced[ev.Get("incarnation")]:
		hit(probeCleanupAfterInPlaceRestart)
	case ev.Kind == "control.take" && ev.Outcome == "ok":
		hit(probeHumanTookAgentTab)
	case ev.Actor == "fault" && ev.Kind == "host.suspend":
		if d, err := time.ParseDuration(ev.Get("for")); err == nil && d > 30*time.Minute && p.liveSessions > 0 {
			hit(probeHostSleptPastIdle)
		}
	case ev.Actor == "psm" && ev.Kind == "native.resume" && ev.Outcome == "resumed":
		hit(probeNativeResumed)
	case ev.Actor == "fault" && ev.Kind == "provider-crash" && ev.Outcome == "first-turn-crash":
		hit(probeFirstNativeTurnCut)
	case ev.Kind == "idle-release-deferred" && ev.Outcome == "delegated child":
		hit(probeIdleReleaseDeferredForChild)
	case ev.Kind == "idle-release-deferred":
		hit(probeIdleReleaseDeferredByPin)
	case ev.Kind == "session.release" && ev.Get("reason") == "idle_timeout":
		if p.tabOpenFor(ev.Get("providerSessionId")) {
			hit(probeIdleReleaseWithOpenTab)
		}
	case ev.Actor == "server" && ev.Kind == "ingest.lost" && ev.Get("completions") != "":
		hit(probeRestartLostIngestion)
	case ev.Actor == "server" && ev.Kind == "session.runtime" && ev.Outcome == "stopped":
		p.stopping = append(p.stopping, ev.Get("thread"))
	case ev.Actor == "server" && ev.Kind == "session.projected":
		p.stopping = slices.DeleteFunc(p.stopping, func(t string) bool { return t == ev.Get("thread") })
	case ev.Actor == "server" && ev.Kind == "message.duplicate":
		hit(probeMessageDeliveredTwice)
	case ev.Actor == "server" && ev.Kind == "run.start":
		p.runs[ev.Get("run")] = true
	case ev.Actor == "server" && (ev.Kind == "run.end" || ev.Kind == "ingest.replay"):
		delete(p.runs, ev.Get("run"))
	case ev.Actor == "server" && ev.Kind == "instance.extra" && ev.Outcome != "":
		if len(p.runs) > 0 {
			hit(probeExtraInstanceOverRunningRun)
		}
	case ev.Actor == "server" && ev.Kind == "reconcile":
		delete(p.runs, ev.Get("run"))
		if ev.Get("trigger") == "startup" {
			hit(probeRestartFoundRunningRun)
		}
	case ev.Kind == "restart-continuation":
		hit(probeRestartContinuation)
	case ev.Kind == "host.suspend":
		p.suspended[ev.Get("client")] = true
	case ev.Kind == "host.resume":
		delete(p.suspended, ev.Get("client"))
	case ev.Kind == "host.control-restore" || ev.Kind == "host.stall":
		hit(probeCallOnLeftThreadTab)
	case ev.Kind == "host.wait-exhausted":
		hit(probeHostWaitExhausted)
	case ev.Actor == "broker" && ev.Kind == "host.request":
		if pin, holder := ev.Get("pin"), ev.Get("tab-host"); pin != "-" && holder != "-" && pin != holder {
			hit(probeTabOnAnotherHostThanPin)
		}
		if p.suspended[ev.Get("client")] {
			hit(probeRequestToHalfOpenHost)
		}
	case ev.Kind == "tab.swept":
		p.closeTab(ev.Get("tab"))
	case strings.HasPrefix(ev.Actor, "agent/") && ev.Outcome == "401 unknown_or_expired_token":
		hit(probeStaleCredentialRefused)
	case strings.HasPrefix(ev.Actor, "agent/"):
		p.refToolCall(ev, hit)
	}
}

func (p *ProbeCounter) refTerminal(ev *sim.Event, hit func(string)) {
	session := ev.Get("session")
	switch {
	case ev.Actor == "main" && ev.Kind == "spawn":
		p.claude[session] = ev.Get("kind") == "claude"
		if b := ev.Get("backend"); !p.running[b] {
			p.running[b] = true
			p.starting[b] = true
			p.backends++
		}
	case ev.Actor == "user" && ev.Kind == "type" && session != "":
		p.draft[session] = ev.Get("key") == "text"
	case ev.Actor == "user" && (ev.Kind == "send" || ev.Kind == "submit") && session != "":
		p.draft[session] = false
	case ev.Actor == "main" && ev.Kind == "reap" && (ev.Outcome == "spared" || ev.Get("jobs") != "0"):
		hit(probeReapWithBackgroundJob)
	case ev.Actor == "main" && ev.Kind == "pty.detach" && (ev.Outcome == "ignored" || ev.Outcome == "unmatched"):
		hit(probeDetachWithoutReference)
	case ev.Actor == "main" && ev.Kind == "exit.late" && ev.Get("entry") != "-" && ev.Get("entry") != ev.Get("backend"):
		hit(probeLateExitOverReplacement)
	case ev.Actor == "main" && ev.Kind == "recover" && ev.Outcome == "joined":
		hit(probeRecoverJoinedSpawn)
	case ev.Actor == "main" && ev.Kind == "stop" && ev.Outcome == "post-start":
		hit(probePostStartStopWhileBlocked)
	case ev.Actor == "main" && ev.Kind == "start" && ev.Outcome == "live":
		delete(p.starting, ev.Get("backend"))
	case ev.Actor == "main" && ev.Kind == "delivery" && ev.Outcome == "reserved":
		p.delivering[session] = ev.Get("backend")
	case ev.Actor == "main" && ev.Kind == "delivery" && (ev.Outcome == "delivered" || ev.Outcome == "failed"):
		delete(p.delivering, session)
	case ev.Actor == "main" && (ev.Kind == "start" && ev.Outcome != "live" || ev.Kind == "kill" && ev.Outcome == "killed" || ev.Kind == "exit"):
		if ev.Kind == "kill" && ev.Get("cause") == "close" && p.starting[ev.Get("backend")] {
			hit(probeCloseDuringStart)
		}
		if ev.Kind != "kill" {
			delete(p.starting, ev.Get("backend"))
		}
		if b := p.delivering[session]; b != "" && b == ev.Get("backend") {
			hit(probeDeliveryCrossedLifecycle)
		}
		if b := ev.Get("backend"); p.running[b] {
			delete(p.running, b)
			p.backends--
		}
	case ev.Actor == "user" && ev.Kind == "renderer.reload":
		if p.backends > 0 {
			hit(probeReloadOverLiveBackend)
		}
	case ev.Actor == "main" && ev.Kind == "pty.write" && ev.Outcome == "held",
		strings.HasPrefix(ev.Actor, "agent/") && ev.Kind == "input.misplaced":
		hit(probeInputBeforeComposer)
	case strings.HasPrefix(ev.Actor, "pane/") && ev.Kind == "pane.mount":
		if p.delivering[session] != "" {
			hit(probeDeliveryCrossedLifecycle)
		}
		if p.claude[session] && p.draft[session] {
			hit(probeRemountWithClaudeDraft)
		}
	}
}

func (p *ProbeCounter) refToolCall(ev *sim.Event, hit func(string)) {
	tab, cred := ev.Get("tab"), ev.Get("cred")
	switch {
	case ev.Kind == "preview_open" && ev.Outcome == "ok":
		if _, seen := p.tabCred[tab]; !seen {
			p.tabCred[tab] = cred
			p.tabThread[tab] = ev.Get("thread")
			p.addTab(ev.Get("thread"), 1)
		}
	case acting(ev.Kind) && ev.Get("tab-thread") == ev.Get("thread"):
		// Its own tab resolved: the attempt counts whether it was allowed
		// (fixed) or refused as agentMismatch (reported).
		if opened, ok := p.tabCred[tab]; ok && opened != cred {
			hit(probeTabActedAfterRotation)
		}
		if ev.Kind == "t3_preview_close" && ev.Outcome == "ok" {
			p.closeTab(tab)
		}
	}
	if kb, ok := appendRequestKey(p.kb[:0], ev); ok {
		p.kb = kb
		// Looked up as string(kb), which does not allocate; the key string
		// is built only for a request seen first.
		first, seen := p.firstReq[string(kb)]
		if !seen {
			p.firstReq[p.str.Bytes(kb)] = firstRequest{target: targetIn(ev), cred: cred, starts: p.starts}
			return
		}
		if !first.target.of(ev) {
			hit(probeKeyReusedForAnotherTarget)
		}
		if ev.Get("retry") == "true" {
			if first.cred != cred {
				hit(probeRetryCrossedCredentialReissue)
			}
			if first.starts != p.starts {
				hit(probeRetryCrossedServerRestart)
			}
		}
	}
}
