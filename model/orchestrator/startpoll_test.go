package orchestrator

import (
	"testing"

	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// TestStartPoll_BusyMatchesActiveRun holds a delivery's start poll, which
// keeps the parent's thread row and its last active run, to the lookup it
// replaced (o.st.ActiveRun(d.ParentThread) != nil) over random histories:
// threads appended (the parent among them late, ids repeated), runs started
// and ended, active run ids set to runs that do not exist yet, the parent
// changed.
func TestStartPoll_BusyMatchesActiveRun(t *testing.T) {
	ids := []string{"thread-a", "thread-b", "thread-c"}
	for seed := uint64(1); seed <= 300; seed++ {
		r := sim.NewPRNG(seed)
		pick := func(xs []string) string { return xs[r.Below(uint64(len(xs)))] }
		st := &store.Store{}
		d := &store.DeliveryRun{ID: "d1", ParentThread: pick(ids)}
		p := &startPoll{o: &Orchestrator{st: st}, d: d}
		busy := 0
		for step := range 200 {
			switch r.Below(8) {
			case 0:
				st.Threads = append(st.Threads, &store.Thread{ID: pick(ids)})
			case 1, 2:
				if id := pick(ids); st.Thread(id) != nil {
					st.StartRun(id)
				}
			case 3, 4:
				if len(st.Runs) > 0 {
					st.EndRun(st.Runs[r.Below(uint64(len(st.Runs)))].ID, store.RunCompleted)
				}
			case 5:
				if th := st.Thread(pick(ids)); th != nil {
					th.ActiveRunID = pick([]string{"", "run:1", "run:3", "run:9"})
				}
			case 6:
				if r.Below(4) == 0 {
					d.ParentThread = pick(ids)
				}
			}
			got, want := p.busy(), st.ActiveRun(d.ParentThread) != nil
			if got != want {
				t.Fatalf("seed %d step %d: busy() = %v, ActiveRun != nil = %v", seed, step, got, want)
			}
			if got {
				busy++
			}
		}
		if seed == 300 && busy == 0 {
			t.Fatal("never busy: the histories reach too little")
		}
	}
}
