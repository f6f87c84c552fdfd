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
