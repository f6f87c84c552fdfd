// Package store models T3 Code's durable state: what survives a server
// restart (threads, runs, project settings). Everything else is in memory
// in the components that server builds and is lost on restart.
package store

import "fmt"

// Run statuses used by the models.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// Thread is a thread projection row.
type Thread struct {
	ID        string
	ProjectID string
	// Instance is the ProviderInstanceId the thread's turns run on.
	Instance    string
	Archived    bool
	ActiveRunID string
}

// Run is one run of a thread.
type Run struct {
	ID       string
	ThreadID string
	Instance string
	Status   string
}

// Project holds the per-project settings the models read.
type Project struct {
	ID string
	// BrowserAccess grants the preview capability to agents of the project.
	BrowserAccess bool
}

// Store is the durable database of one environment.
type Store struct {
	Threads  []*Thread
	Runs     []*Run
	Projects []*Project
	runs     int
}

// Thread returns the thread id, or nil.
func (s *Store) Thread(id string) *Thread {
	for _, t := range s.Threads {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Project returns the project id, or nil.
func (s *Store) Project(id string) *Project {
	for _, p := range s.Projects {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// Run returns the run id, or nil.
func (s *Store) Run(id string) *Run {
	for _, r := range s.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// ActiveRun returns the thread's active run, or nil.
func (s *Store) ActiveRun(threadID string) *Run {
	t := s.Thread(threadID)
	if t == nil || t.ActiveRunID == "" {
		return nil
	}
	return s.Run(t.ActiveRunID)
}

// StartRun records a new running run of the thread on its current instance.
func (s *Store) StartRun(threadID string) *Run {
	t := s.Thread(threadID)
	s.runs++
	r := &Run{ID: fmt.Sprintf("run:%d", s.runs), ThreadID: threadID, Instance: t.Instance, Status: RunRunning}
	s.Runs = append(s.Runs, r)
	t.ActiveRunID = r.ID
	return r
}

// EndRun gives the run a terminal status and clears the thread's active run.
func (s *Store) EndRun(runID, status string) {
	r := s.Run(runID)
	if r == nil || r.Status != RunRunning {
		return
	}
	r.Status = status
	if t := s.Thread(r.ThreadID); t != nil && t.ActiveRunID == runID {
		t.ActiveRunID = ""
	}
}
