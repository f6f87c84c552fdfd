package orchestrator

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Delegated completion delivery: how the terminal results of a parent
// run's delegated tasks reach the parent. Read from the scenarios of
// OrchestratorMcpToolkit.integration.test.ts (stored index:70188769112, a
// version newer than the inventory's 006bb815 that keeps every delivery
// scenario 006bb815 lists) and OrchestratorMcpService.ts @ 04058804
// (completionWake, readTask's acknowledgement, cancelTask's disposal). The
// engine's decider is not read: where the test leaves a step implicit the
// comment says what the model chose.
//
// A parent run's cohort holds at most one delivery reservation. A task
// whose wake policy asks for a wake (always, or settled_only once the
// parent settled) is claimed by the reservation when it reaches a terminal
// state: the first claim reserves (generation+1) and makes one parent wake
// offer; later terminals join it until its delivery run is dispatched, and
// are held (pending) after that. When the delivery run completes its tasks
// are delivered and the held ones reserve one successor. Acknowledging a
// task (the parent observed its result: task_status, a direct read of the
// whole result) or disposing it (task_cancel) releases a reservation whose
// tasks are all observed: its queued delivery run is cancelled. A parent
// Stop is a barrier (stopped: the queued delivery is cancelled and every
// undelivered task of the cohort disposed), Queue Remove of the delivery
// run disposes the cohort.
//
// The machine runs only when Deliveries is on (the fidelity cases, and the
// worlds' completion-delivery dimension); off, a task's Delivery is the
// single pending/delivered/acknowledged/disposed flag it always was.

// Wake policies (delegated_task.request completionWake, OrchestratorMcpService
// delegateTask @ 04058804: async "always", wait "settled_only").
const (
	WakeAlways      = "always"
	WakeSettledOnly = "settled_only"
)

// Delivery states (completionDelivery.state).
const (
	DeliveryPending      = "pending"
	DeliveryClaimed      = "claimed"
	DeliveryDelivered    = "delivered"
	DeliveryAcknowledged = "acknowledged"
	DeliveryDisposed     = "disposed"
)

// Cohort dispositions (delegatedCompletion.disposition).
const (
	CohortOpen     = "open"
	CohortStopped  = "stopped"
	CohortDisposed = "disposed"
)

// Delivery run statuses.
const (
	DeliveryQueued    = "queued"
	DeliveryRunning   = "running"
	DeliveryCompleted = "completed"
	DeliveryCancelled = "cancelled"
)

// Errors of queue commands on a server-owned delivery run (the toolkit
// test's queued-run.edit, .reorder and queued-message.promote-to-steer).
const (
	ErrCommandRejected = "OrchestratorCommandRejectedError"
	ErrDispatchFailed  = "OrchestratorDispatchError"
)

// Queue commands a client may send about a queued run.
const (
	QueueEdit    = "queued-run.edit"
	QueueReorder = "queued-run.reorder"
	QueueSteer   = "queued-message.promote-to-steer"
	QueueRemove  = "queued-run.cancel"
)

// Cohort returns the delivery cohort of parentRunID, or nil.
func (o *Orchestrator) Cohort(parentRunID string) *store.Cohort {
	for _, c := range o.st.Cohorts {
		if c.ParentRunID == parentRunID {
			return c
		}
	}
	return nil
}

// Delivery returns the delivery run id, or nil.
func (o *Orchestrator) Delivery(id string) *store.DeliveryRun {
	for _, d := range o.st.Deliveries {
		if d.ID == id {
			return d
		}
	}
	return nil
}

func (o *Orchestrator) cohortFor(t *store.Task) *store.Cohort {
	if t.ParentRunID == "" {
		return nil
	}
	if c := o.Cohort(t.ParentRunID); c != nil {
		return c
	}
	c := &store.Cohort{ParentThread: t.ParentThread, ParentRunID: t.ParentRunID, Disposition: CohortOpen}
	o.st.Cohorts = append(o.st.Cohorts, c)
	return c
}

func terminalTask(t *store.Task) bool { return t.Status != store.TaskRunning }

// parentLive reports whether the cohort's parent run is still running
// (settled_only tasks wake only a settled parent).
func (o *Orchestrator) parentLive(c *store.Cohort) bool {
	r := o.st.Run(c.ParentRunID)
	return r != nil && r.Status == store.RunRunning
}

// taskTerminal is the finalize of a task's terminal state: it runs after
// the terminal is written (the toolkit test: "offers land after the
// finalize projection writes"), so a cancel's disposal, dispatched in the
// same call, comes first.
func (o *Orchestrator) taskTerminal(t *store.Task) {
	if !o.Deliveries {
		return
	}
	o.env.After(0, func() {
		if o.dead {
			return
		}
		o.finalize(t)
	})
}

func (o *Orchestrator) finalize(t *store.Task) {
	if t.Delivery == DeliveryDisposed || t.Delivery == DeliveryAcknowledged || t.Delivery == DeliveryDelivered {
		return
	}
	c := o.cohortFor(t)
	if c == nil {
		return
	}
	if c.Disposition != CohortOpen {
		t.Delivery = DeliveryDisposed
		return
	}
	if t.CompletionWake != WakeAlways && o.parentLive(c) {
		// settled_only (and a legacy request without the field): the
		// blocking call delivers while the parent is live; no wake.
		return
	}
	o.claim(c, t)
}

// claim puts a terminal task in the cohort's reservation: a new one (with
// its wake offer), the undispatched one (join), or, once the reservation's
// delivery run is dispatched, holds it for the successor.
func (o *Orchestrator) claim(c *store.Cohort, t *store.Task) {
	r := c.Reservation
	switch {
	case r == nil:
		defer o.armDispatch(c, c.Generation+1)
		c.Generation++
		var mb [96]byte
		c.Reservation = store.NewRow(&o.st.Rows.Reservations, store.Reservation{Generation: c.Generation, TaskIDs: []string{t.ID},
			MessageID: o.env.Str().Bytes(strconv.AppendInt(append(append(append(mb[:0], "message:delegated-completion:"...), c.ParentRunID...), ':'), int64(c.Generation), 10))})
		t.Delivery, t.Offered = DeliveryClaimed, true
		c.Offers++
		o.env.Emit(actor, "delivery.offer", "", sim.A("parent", c.ParentThread), sim.A("run", c.ParentRunID),
			sim.A("generation", fmt.Sprint(c.Generation)), sim.A("task", t.ID))
	case r.DeliveryRun == "":
		r.TaskIDs = append(r.TaskIDs, t.ID)
		t.Delivery, t.Offered = DeliveryClaimed, true
	default:
		// Held for the successor (Offered: its terminal is the machine's).
		t.Delivery, t.Offered = DeliveryPending, true
	}
}

// DispatchDelivery is the continuation worker's message.dispatch of the
// cohort's reservation (queue_after_active, delegatedCompletion with its
// generation and task ids): a queued delivery run, or one that runs at
// once when the parent has no active run. It answers the run, or nil when
// generation is not the current reservation's.
func (o *Orchestrator) DispatchDelivery(parentRunID string, generation int) *store.DeliveryRun {
	c := o.Cohort(parentRunID)
	if c == nil || c.Reservation == nil || c.Reservation.Generation != generation || c.Reservation.DeliveryRun != "" {
		return nil
	}
	r := c.Reservation
	var ib [96]byte
	d := store.NewRow(&o.st.Rows.Deliveries, store.DeliveryRun{ID: o.env.Str().Bytes(strconv.AppendInt(append(append(append(ib[:0], "run:delivery:"...), parentRunID...), ':'), int64(generation), 10)), ParentThread: c.ParentThread,
		ParentRunID: parentRunID, Generation: generation, TaskIDs: slices.Clone(r.TaskIDs), MessageID: r.MessageID,
		Status: DeliveryQueued})
	o.st.Deliveries = append(o.st.Deliveries, d)
	r.DeliveryRun = d.ID
	if o.st.ActiveRun(c.ParentThread) == nil {
		d.Status = DeliveryRunning
	}
	o.env.Emit(actor, "delivery.dispatch", d.Status, sim.A("parent", c.ParentThread), sim.A("delivery", d.ID))
	return d
}

// StartDelivery starts a queued delivery run (the parent's active run
// ended); it reports whether it started.
func (o *Orchestrator) StartDelivery(id string) bool {
	d := o.Delivery(id)
	if d == nil || d.Status != DeliveryQueued {
		return false
	}
	d.Status = DeliveryRunning
	o.env.Emit(actor, "delivery.start", "", sim.A("parent", d.ParentThread), sim.A("delivery", d.ID))
	return true
}

// EndDelivery completes a running delivery run: its claimed tasks are
// delivered, the reservation is released and the tasks held meanwhile
// reserve the successor (one more offer).
func (o *Orchestrator) EndDelivery(id string) bool {
	d := o.Delivery(id)
	if d == nil || d.Status != DeliveryRunning {
		return false
	}
	d.Status = DeliveryCompleted
	for _, tid := range d.TaskIDs {
		if t := o.st.Task(tid); t != nil && t.Delivery == DeliveryClaimed {
			t.Delivery = DeliveryDelivered
		}
	}
	c := o.Cohort(d.ParentRunID)
	if c != nil && c.Reservation != nil && c.Reservation.DeliveryRun == d.ID {
		c.Reservation = nil
	}
	o.env.Emit(actor, "delivery.end", "", sim.A("parent", d.ParentThread), sim.A("delivery", d.ID))
	if c != nil {
		o.successor(c)
	}
	return true
}

// successor reserves one delivery for every terminal task of the cohort
// held while the previous delivery ran.
func (o *Orchestrator) successor(c *store.Cohort) {
	if c.Disposition != CohortOpen || c.Reservation != nil {
		return
	}
	for _, t := range o.st.Tasks {
		if t.ParentRunID == c.ParentRunID && terminalTask(t) && t.Delivery == DeliveryPending && t.Offered {
			o.claim(c, t)
		}
	}
}

// Acknowledge records that the parent observed t's terminal result
// (delegated_task.completion-delivery.acknowledge); observedBy is the
// parent run that read it.
func (o *Orchestrator) Acknowledge(t *store.Task, observedBy string) {
	if t.Delivery == DeliveryAcknowledged || t.Delivery == DeliveryDisposed {
		return
	}
	t.Delivery, t.ObservedByRunID = DeliveryAcknowledged, observedBy
	if c := o.Cohort(t.ParentRunID); c != nil {
		o.release(c)
	}
}

// dispose is delegated_task.completion-delivery.dispose.
func (o *Orchestrator) dispose(t *store.Task) {
	t.Delivery = DeliveryDisposed
	if c := o.Cohort(t.ParentRunID); c != nil {
		o.release(c)
	}
}

// release drops a reservation whose every task the parent has observed
// (or disposed): its delivery, if still queued, is stale and cancelled. A
// delivery already running is left to finish.
func (o *Orchestrator) release(c *store.Cohort) {
	r := c.Reservation
	if r == nil {
		return
	}
	for _, tid := range r.TaskIDs {
		if t := o.st.Task(tid); t != nil && t.Delivery != DeliveryAcknowledged && t.Delivery != DeliveryDisposed {
			return
		}
	}
	if r.DeliveryRun != "" {
		d := o.Delivery(r.DeliveryRun)
		if d != nil && d.Status == DeliveryRunning {
			return
		}
		if d != nil && d.Status == DeliveryQueued {
			d.Status = DeliveryCancelled
		}
	}
	c.Reservation = nil
	o.env.Emit(actor, "delivery.release", "", sim.A("parent", c.ParentThread), sim.A("run", c.ParentRunID))
}

// StopParentRun is a parent Stop (run.interrupt of the parent run) as the
// cohort sees it: a stopped barrier; the queued delivery is cancelled and
// every task of the cohort not yet delivered or observed is disposed, so a
// child that reaches a terminal state later wakes nobody.
func (o *Orchestrator) StopParentRun(parentRunID string) {
	c := o.Cohort(parentRunID)
	if c == nil {
		for _, t := range o.st.Tasks {
			if t.ParentRunID == parentRunID {
				c = o.cohortFor(t)
				break
			}
		}
	}
	if c == nil {
		return
	}
	c.Disposition = CohortStopped
	o.dropReservation(c)
	for _, t := range o.st.Tasks {
		if t.ParentRunID == parentRunID && t.Delivery != DeliveryDelivered && t.Delivery != DeliveryAcknowledged {
			t.Delivery = DeliveryDisposed
		}
	}
}

func (o *Orchestrator) dropReservation(c *store.Cohort) {
	if r := c.Reservation; r != nil && r.DeliveryRun != "" {
		if d := o.Delivery(r.DeliveryRun); d != nil && d.Status == DeliveryQueued {
			d.Status = DeliveryCancelled
		}
	}
	c.Reservation = nil
}

// QueueCommand serves a client's queue command on a queued run that is a
// server-owned delivery: edits are rejected, reorder and promote-to-steer
// fail to dispatch, and Queue Remove is a durable disposal of the cohort
// (disposed; the run cancelled, its tasks disposed, their results kept).
// It answers "" for a run that is not a queued delivery.
func (o *Orchestrator) QueueCommand(kind, runID string) string {
	d := o.Delivery(runID)
	if d == nil || d.Status != DeliveryQueued {
		return ""
	}
	switch kind {
	case QueueEdit:
		return ErrCommandRejected
	case QueueReorder, QueueSteer:
		return ErrDispatchFailed
	case QueueRemove:
		c := o.Cohort(d.ParentRunID)
		d.Status = DeliveryCancelled
		for _, tid := range d.TaskIDs {
			if t := o.st.Task(tid); t != nil {
				t.Delivery = DeliveryDisposed
			}
		}
		if c != nil {
			c.Disposition = CohortDisposed
			c.Reservation = nil
		}
		return Accepted
	}
	return ErrInvalidRequest
}

// SetWakePolicy is delegated_task.wake-policy: the policy persists; a
// terminal task that never offered and is still undelivered gets the wake
// its finalize declined, one already offered or observed gets none.
func (o *Orchestrator) SetWakePolicy(t *store.Task, wake string) {
	t.CompletionWake = wake
	if !o.Deliveries || wake != WakeAlways || !terminalTask(t) || t.Offered || t.Delivery != DeliveryPending {
		return
	}
	if c := o.cohortFor(t); c != nil && c.Disposition == CohortOpen {
		o.claim(c, t)
	}
}

// The worlds' continuation worker (ProviderContinuationRequests takes the
// offer and dispatches the delivery message): the model's own timings, no
// upstream constants.
const (
	// DeliveryDispatchDelay is how long after an offer the worker
	// dispatches the reservation.
	DeliveryDispatchDelay = time.Second
	// DeliveryPoll is how often a queued delivery looks for the parent's
	// active run to have ended.
	DeliveryPoll = 5 * time.Second
	// DeliveryRunMin and DeliveryRunMax bound how long a delivery run (the
	// parent's turn reading the results) takes.
	DeliveryRunMin = 10 * time.Second
	DeliveryRunMax = 5 * time.Minute
)

// EnableDeliveries turns delivery on with the worker (the worlds'
// completion-delivery dimension; draws from orchestrator/delivery): an
// offer is dispatched, a queued delivery starts once the parent's active
// run ended, and a running one completes after a drawn time. Called on a
// new process, it resumes the store's reservations: undispatched ones are
// dispatched, and a delivery the dead process was running is queued again
// (its turn was cut by the restart).
func (o *Orchestrator) EnableDeliveries() {
	o.Deliveries, o.worker = true, true
	o.dlv = o.env.Rand(actor + "/delivery")
	for _, c := range o.st.Cohorts {
		r := c.Reservation
		if r == nil {
			continue
		}
		o.env.Emit(actor, "delivery.resume", "", sim.A("parent", c.ParentThread), sim.A("run", c.ParentRunID),
			sim.A("generation", fmt.Sprint(r.Generation)))
		if r.DeliveryRun == "" {
			o.armDispatch(c, r.Generation)
			continue
		}
		if d := o.Delivery(r.DeliveryRun); d != nil && (d.Status == DeliveryQueued || d.Status == DeliveryRunning) {
			d.Status = DeliveryQueued
			o.armStart(d)
		}
	}
}

func (o *Orchestrator) armDispatch(c *store.Cohort, generation int) {
	if !o.worker {
		return
	}
	o.env.After(DeliveryDispatchDelay, func() {
		if o.dead {
			return
		}
		d := o.DispatchDelivery(c.ParentRunID, generation)
		switch {
		case d == nil:
		case d.Status == DeliveryRunning:
			o.armEnd(d)
		default:
			o.armStart(d)
		}
	})
}

// armStart polls, every DeliveryPoll, for the parent thread to be idle,
// then starts the delivery run d. The poll is bound once per delivery
// (a parent's run can keep it polling for an hour: a closure per poll was
// chaos's largest single source of allocations).
func (o *Orchestrator) armStart(d *store.DeliveryRun) {
	p := &startPoll{o: o, d: d}
	p.fn = p.poll
	o.env.After(DeliveryPoll, p.fn)
}

// startPoll is one delivery run's start poll; fn is poll, bound once.
type startPoll struct {
	o  *Orchestrator
	d  *store.DeliveryRun
	fn func()
	// thread is the row of threadID (d.ParentThread when it was found) and
	// run the row of runID, the thread's active run last looked up: the
	// store only ever appends threads and runs, and an id's first row is
	// the one its lookup returns, so a row once found stays the answer.
	// busy answers as o.st.ActiveRun(d.ParentThread) != nil without two
	// string-keyed lookups per poll (a parent's run can keep a delivery
	// polling every 5 s for an hour).
	threadID string
	thread   *store.Thread
	runID    string
	run      *store.Run
}

// busy reports whether the parent thread has an active run:
// o.st.ActiveRun(p.d.ParentThread) != nil (TestStartPoll_BusyMatchesActiveRun).
func (p *startPoll) busy() bool {
	st := p.o.st
	if p.thread == nil || p.threadID != p.d.ParentThread {
		p.threadID, p.thread = p.d.ParentThread, st.Thread(p.d.ParentThread)
		if p.thread == nil {
			return false
		}
	}
	id := p.thread.ActiveRunID
	if id == "" {
		return false
	}
	if p.run == nil || p.runID != id {
		p.runID, p.run = id, st.Run(id)
	}
	return p.run != nil
}

func (p *startPoll) poll() {
	o, d := p.o, p.d
	if o.dead || d.Status != DeliveryQueued {
		return
	}
	if p.busy() {
		o.env.After(DeliveryPoll, p.fn)
		return
	}
	o.StartDelivery(d.ID)
	o.armEnd(d)
}

func (o *Orchestrator) armEnd(d *store.DeliveryRun) {
	o.env.After(o.dlv.Duration("delivery-run", DeliveryRunMin, DeliveryRunMax), func() {
		if o.dead || d.Status != DeliveryRunning {
			return
		}
		o.EndDelivery(d.ID)
	})
}
