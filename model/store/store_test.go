package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// RunsOf and the task groups answer what a scan of the table would, in
// table order, including rows appended after an earlier question, and
// start over when the table is replaced by a shorter one.
func TestGroups_AnswerAsAScanWould(t *testing.T) {
	s := &Store{Threads: []*Thread{{ID: "thread-a"}, {ID: "thread-b"}}}
	a1 := s.StartRun("thread-a")
	b1 := s.StartRun("thread-b")
	assert.Equal(t, []*Run{a1}, s.RunsOf("thread-a"))
	a2 := s.StartRun("thread-a")
	assert.Equal(t, []*Run{a1, a2}, s.RunsOf("thread-a"))
	assert.Equal(t, []*Run{b1}, s.RunsOf("thread-b"))
	assert.Empty(t, s.RunsOf("thread-c"))

	s.Tasks = []*Task{{ID: "t1", ParentThread: "thread-a"}, {ID: "t2", ParentThread: "thread-b", ParentTask: "t1"}}
	assert.Equal(t, []*Task{s.Tasks[0]}, s.TasksDelegatedBy("thread-a"))
	assert.Equal(t, []*Task{s.Tasks[1]}, s.TasksUnder("t1"))
	s.Tasks = append(s.Tasks, &Task{ID: "t3", ParentThread: "thread-a", ParentTask: "t1"})
	assert.Equal(t, []*Task{s.Tasks[0], s.Tasks[2]}, s.TasksDelegatedBy("thread-a"))
	assert.Equal(t, []*Task{s.Tasks[1], s.Tasks[2]}, s.TasksUnder("t1"))
	s.Tasks = []*Task{{ID: "t9", ParentThread: "thread-b"}}
	assert.Empty(t, s.TasksDelegatedBy("thread-a"))
	assert.Equal(t, []*Task{s.Tasks[0]}, s.TasksDelegatedBy("thread-b"))

	s.Natives = []*NativeConversation{{ID: "n1"}, {ID: "n1"}, {ID: "n2"}}
	assert.Same(t, s.Natives[0], s.Native("n1"), "the first row with an id, as a scan")
	assert.Nil(t, s.Native("n3"))
}

// The new indexes answer as their scans did: the first project and
// provider-session row with an id, a thread's first pending queued turn
// (whose status changes after it is grouped), a thread's natives in
// creation order.
func TestIndexes_AnswerAsAScanWould(t *testing.T) {
	s := &Store{Projects: []*Project{{ID: "p1"}, {ID: "p1", BrowserAccess: true}}}
	assert.Same(t, s.Projects[0], s.Project("p1"))
	s.Projects = append(s.Projects, &Project{ID: "p2"})
	assert.Same(t, s.Projects[2], s.Project("p2"))
	assert.Nil(t, s.Project("p3"))

	s.WriteProviderSession("ps1", "ready", "", 0)
	s.WriteProviderSession("ps2", "ready", "", 0)
	s.WriteProviderSession("ps1", "running", "", 1)
	assert.Len(t, s.ProviderSessions, 2)
	assert.Equal(t, 2, s.ProviderSession("ps1").Writes)

	s.QueuedTurns = []*QueuedTurn{{ThreadID: "a", MessageID: "m1", Status: QueuedPending}, {ThreadID: "b", MessageID: "m2", Status: QueuedPending}}
	assert.Equal(t, "m1", s.PendingQueuedTurn("a").MessageID)
	s.QueuedTurns[0].Status = QueuedAdopted
	assert.Nil(t, s.PendingQueuedTurn("a"))
	s.QueuedTurns = append(s.QueuedTurns, &QueuedTurn{ThreadID: "a", MessageID: "m3", Status: QueuedPending})
	assert.Equal(t, "m3", s.PendingQueuedTurn("a").MessageID)

	s.Natives = []*NativeConversation{{ID: "n1", ThreadID: "a"}, {ID: "n2", ThreadID: "b"}}
	s.Natives = append(s.Natives, &NativeConversation{ID: "n3", ThreadID: "a"})
	assert.Equal(t, []*NativeConversation{s.Natives[0], s.Natives[2]}, s.NativesOf("a"))
}

// OpenRunsFrom moves past settled runs only: it stops at the first run
// that is not settled, and a run settled later lets it move on.
func TestOpenRunsFrom_StopsAtTheFirstUnsettledRun(t *testing.T) {
	s := &Store{Threads: []*Thread{{ID: "a"}}}
	r1, r2, r3 := s.StartRun("a"), s.StartRun("a"), s.StartRun("a")
	assert.Equal(t, 0, s.OpenRunsFrom())
	r1.Status, r3.Status = RunCompleted, RunCancelled
	assert.Equal(t, 1, s.OpenRunsFrom(), "r2 still runs")
	r2.Status = RunFailed
	assert.Equal(t, 3, s.OpenRunsFrom())
	s.Runs = s.Runs[:1]
	assert.Equal(t, 1, s.OpenRunsFrom(), "a shorter table starts over")
}

// A row deleted from the middle of a table (the orchestrator's Kill drops
// unflushed tasks) and rows appended after it are seen by the next
// question, even when the table is back to its old length.
func TestIndexes_SeeADeletedRow(t *testing.T) {
	s := &Store{Tasks: []*Task{{ID: "t1", ParentThread: "a"}, {ID: "t2", ParentThread: "a"}, {ID: "t3", ParentThread: "a"}}}
	assert.NotNil(t, s.Task("t2"))
	assert.Len(t, s.TasksDelegatedBy("a"), 3)
	s.Tasks = append(s.Tasks[:1], s.Tasks[2:]...)
	s.Tasks = append(s.Tasks, &Task{ID: "t4", ParentThread: "a"})
	assert.Nil(t, s.Task("t2"), "deleted")
	assert.NotNil(t, s.Task("t4"), "appended after the deletion")
	assert.Equal(t, []*Task{s.Tasks[0], s.Tasks[1], s.Tasks[2]}, s.TasksDelegatedBy("a"))
}

// RestartSources finds what a scan of every thread's latest run would:
// the marked latest runs, in thread-row order (not marking order), and
// drops a marked run once a newer run of its thread starts; the schedule
// and child-task indexes answer as scans, also after a row is deleted.
func TestRestartSourcesAndIndexes_AnswerAsAScanWould(t *testing.T) {
	s := &Store{Threads: []*Thread{{ID: "thread-a"}, {ID: "thread-b"}, {ID: "thread-c"}}}
	scan := func() []*Run {
		var out []*Run
		for _, th := range s.Threads {
			if runs := s.RunsOf(th.ID); len(runs) > 0 && runs[len(runs)-1].CancelledByRestart {
				out = append(out, runs[len(runs)-1])
			}
		}
		return out
	}
	c1, a1, b1 := s.StartRun("thread-c"), s.StartRun("thread-a"), s.StartRun("thread-b")
	s.MarkCancelledByRestart(c1)
	s.MarkCancelledByRestart(a1)
	s.MarkCancelledByRestart(a1) // twice: listed once
	assert.Equal(t, []*Run{a1, c1}, s.RestartSources())
	assert.Equal(t, scan(), s.RestartSources())
	a2 := s.StartRun("thread-a")
	s.MarkCancelledByRestart(b1)
	assert.Equal(t, []*Run{b1, c1}, s.RestartSources())
	s.MarkCancelledByRestart(a2)
	assert.Equal(t, scan(), s.RestartSources())

	s.Schedules = []*Schedule{{ID: "s1"}, {ID: "s2"}, {ID: "s3"}}
	assert.Same(t, s.Schedules[1], s.Schedule("s2"))
	s.Schedules = append(s.Schedules[:1], s.Schedules[2:]...)
	assert.Nil(t, s.Schedule("s2"))
	assert.Same(t, s.Schedules[1], s.Schedule("s3"))
	s.Tasks = []*Task{{ID: "t1", ChildThreadID: "thread-x"}, {ID: "t2", ChildThreadID: "thread-x"}}
	assert.Equal(t, "t1", s.TaskOfChild("thread-x").ID)
	assert.Nil(t, s.TaskOfChild("thread-y"))
}
