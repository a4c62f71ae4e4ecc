package crash

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// TestTimelines: each round that killed gives its restart's points in
// order as ms after the kill, the spawn standing in for a process start
// no log line marked; a point never reached and a round that never
// killed are left out.
func TestTimelines(t *testing.T) {
	kill := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n float64) time.Time { return kill.Add(time.Duration(n * float64(time.Millisecond))) }
	res := Result{Rounds: []RoundResult{
		{Round: 1, Timeline: Timeline{Kill: kill, Spawn: ms(10), ProcessStart: ms(12.5), RecoveryStart: ms(40), RedoApplied: ms(300),
			Ready: ms(900), FirstCommit: ms(950)}},
		{Round: 2, Timeline: Timeline{Kill: kill, Spawn: ms(8), Ready: ms(700)}},
		{Round: 3, Failed: true},
	}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Timelines(b)
	if err != nil {
		t.Fatal(err)
	}
	pt := func(name string, ms float64) workload.TimelinePoint {
		return workload.TimelinePoint{Name: name, Ms: ms}
	}
	want := []workload.TimelineRound{
		{Round: 1, Points: []workload.TimelinePoint{pt("kill", 0), pt("process start", 12.5), pt("recovery start", 40), pt("redo applied", 300),
			pt("ready", 900), pt("first commit", 950)}},
		{Round: 2, Points: []workload.TimelinePoint{pt("kill", 0), pt("process start", 8), pt("ready", 700)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Timelines =\n%v\nwant\n%v", got, want)
	}
	if _, err := Timelines([]byte("{")); err == nil {
		t.Error("Timelines of a broken summary succeeded")
	}
	if m, ok := workload.ByName("crash"); !ok || m.Timeline == nil || m.Text == nil {
		t.Error("the crash kind does not register its Timeline and Text")
	}
}

// TestSummaryText: the kind's text of a summary is what `writepath
// crash` prints of the Result.
func TestSummaryText(t *testing.T) {
	res := Result{Server: "mariadbd 10.11", Mode: "kill", Note: "a note", Rounds: []RoundResult{{Round: 1}}}
	var want strings.Builder
	if err := res.WriteText(&want); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	got, err := SummaryText(b)
	if err != nil || got != want.String() {
		t.Errorf("SummaryText = %q, %v; want %q", got, err, want.String())
	}
	if _, err := SummaryText(nil); err == nil {
		t.Error("SummaryText of no summary succeeded")
	}
}
