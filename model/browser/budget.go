package browser

import "time"

// Read budgets and the capture lock of the newest stored ServerBrowser.ts
// (read_file id 70905931248: ServerBrowserPage.withReadBudget, the request
// AbortSignal of handleRequest, withCaptureLock). A request's deadline
// aborts its budget: the read it waits on rejects at once, so its cleanup
// runs and its queue slot and capture lock are let go, while what the read
// was waiting for may still arrive later, and is then disposed.

// budget is one read budget: aborted by its deadline or by its request's.
type budget struct {
	b       *ServerBrowser
	aborted bool
	closed  bool // its work ended: the deadline no longer applies
	aborts  []func()
}

// newBudget returns a budget that aborts itself after d (0: never).
func (b *ServerBrowser) newBudget(d time.Duration) *budget {
	k := &budget{b: b}
	if d > 0 {
		b.env.After(d, k.abort)
	}
	return k
}

// abort aborts the budget: every pending read rejects, once.
func (k *budget) abort() {
	if k.aborted || k.closed {
		return
	}
	k.aborted = true
	fs := k.aborts
	k.aborts = nil
	for _, f := range fs {
		f()
	}
}

// close ends the budget's work: a later deadline is no abort.
func (k *budget) close() {
	k.closed = true
	k.aborts = nil
}

// onAbort runs f when the budget aborts (at once if it has).
func (k *budget) onAbort(f func()) {
	if k.closed {
		return
	}
	if k.aborted {
		f()
		return
	}
	k.aborts = append(k.aborts, f)
}

// read waits for the named native read on t: then(true) once it answers,
// or then(false) at once when the budget aborts first (or already has). A
// read that answers after its budget aborted runs late, if not nil: the
// late resource's disposal.
func (k *budget) read(t *Tab, stage string, then func(ok bool), late func()) {
	if k.aborted {
		then(false)
		return
	}
	settled := false
	settle := func(ok bool) {
		if settled {
			return
		}
		settled = true
		then(ok)
	}
	d := k.b.stage(t, stage)
	if d <= 0 {
		settle(true)
		return
	}
	k.onAbort(func() { settle(false) })
	k.b.env.After(d, func() {
		if settled {
			if late != nil {
				late()
			}
			return
		}
		settle(true)
	})
}

// reads runs the named reads in order; then(false) at the first that
// rejects.
func (k *budget) reads(t *Tab, stages []string, then func(ok bool)) {
	if len(stages) == 0 {
		then(true)
		return
	}
	k.read(t, stages[0], func(ok bool) {
		if !ok {
			then(false)
			return
		}
		k.reads(t, stages[1:], then)
	}, nil)
}

// all runs n parallel parts (each calling its done once) and then(true)
// when all succeeded, then(false) as soon as one fails.
func all(n int, part func(i int, done func(ok bool)), then func(ok bool)) {
	if n == 0 {
		then(true)
		return
	}
	left, over := n, false
	for i := range n {
		part(i, func(ok bool) {
			if over {
				return
			}
			if !ok {
				over = true
				then(false)
				return
			}
			left--
			if left == 0 {
				over = true
				then(true)
			}
		})
	}
}

// captureLock is withCaptureLock: captures and recording start and stop on
// one tab run one at a time, in order; on a closing tab they fail.
type captureLock struct {
	busy    bool
	waiting []func(ok bool, unlock func())
	failed  bool
}

// run runs f with the lock held; f calls unlock when done. ok is false when
// the tab closed first (f must then unlock at once).
func (l *captureLock) run(f func(ok bool, unlock func())) {
	if l.busy {
		l.waiting = append(l.waiting, f)
		return
	}
	l.busy = true
	released := false
	f(!l.failed, func() {
		if released {
			return
		}
		released = true
		l.busy = false
		if len(l.waiting) > 0 {
			next := l.waiting[0]
			l.waiting = l.waiting[1:]
			l.run(next)
		}
	})
}

// fail makes every later and waiting holder fail (the tab closed).
func (l *captureLock) fail() { l.failed = true }
