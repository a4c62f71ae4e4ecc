package coordinator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestAwaitStopsOthersWhenAWorkerEndsThePhase: a worker whose error ends
// the phase for all (PhaseDone.ends_phase) gets the others stopped in
// order (Cancel.stop), and what they then report (done, their summaries)
// is kept in the record; the phase fails with that worker's error alone.
// Any other failure cancels the others, as before.
func TestAwaitStopsOthersWhenAWorkerEndsThePhase(t *testing.T) {
	for _, tt := range []struct {
		name      string
		endsPhase bool
		wantStop  bool
		wantMsg   string
	}{
		{"ends the phase", true, true, "a: limit expired"},
		{"fails", false, false, "another worker failed: a: limit expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Config{}, tempStore(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			workers := []string{"a", "b", "c"}
			rec := &writepathv1.Run{Id: "r", State: writepathv1.RunState_RUN_STATE_RUNNING,
				Phases: []*writepathv1.PhaseRecord{{Name: "run"}}}
			p := &phaseRun{name: "run", workers: map[string]bool{}, ready: map[string]bool{}, done: map[string]bool{}}
			sessions := map[string]*session{}
			for _, w := range workers {
				rec.Phases[0].Workers = append(rec.Phases[0].Workers, &writepathv1.PhaseWorker{Worker: w})
				s := newSession(&writepathv1.Hello{Name: w}, time.Now())
				s.setRunID("r")
				sessions[w] = s
				c.mu.sessions[w] = s
				p.workers[w] = true
			}
			r := newRun(c, rec, workers, time.Second)
			c.mu.runs["r"] = r
			errc := make(chan error, 1)
			go func() { errc <- r.await(p) }()
			r.events <- event{kind: evDone, worker: "a", phase: "run", err: "limit expired", endsPhase: tt.endsPhase, summary: []byte("A")}
			for _, w := range []string{"b", "c"} {
				select {
				case m := <-sessions[w].out:
					cn := m.GetCancel()
					if cn == nil || cn.GetStop() != tt.wantStop || cn.GetReason() != tt.wantMsg || cn.GetRunId() != "r" {
						t.Errorf("%s was sent %v; want a cancel, stop %v, reason %q", w, m, tt.wantStop, tt.wantMsg)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s was sent nothing", w)
				}
			}
			if tt.wantStop && len(sessions["a"].out) > 0 {
				t.Errorf("a, done, was sent %v", <-sessions["a"].out)
			}
			// b ends in order with its summary; c was cancelled (say, an
			// older worker that does not know stop).
			r.events <- event{kind: evDone, worker: "b", phase: "run", summary: []byte("B")}
			r.events <- event{kind: evDone, worker: "c", phase: "run", err: "cancelled: x", cancelled: true}
			select {
			case err = <-errc:
			case <-time.After(10 * time.Second):
				t.Fatal("await did not return once every worker was done")
			}
			if err == nil || err.Error() != "phase run: a: limit expired" {
				t.Errorf("await = %v; want the phase failed with a's error alone", err)
			}
			r.flushNotes()
			var got []string
			for _, pw := range r.record().GetPhases()[0].GetWorkers() {
				got = append(got, fmt.Sprintf("%s:%v:%s:%s", pw.GetWorker(), pw.GetDone(), pw.GetError(), pw.GetSummary()))
			}
			if g := strings.Join(got, " "); g != "a:true:limit expired:A b:true::B c:true:cancelled: x:" {
				t.Errorf("phase workers (name:done:error:summary) %s", g)
			}
		})
	}
}
