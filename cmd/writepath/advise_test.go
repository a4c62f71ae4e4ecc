package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

func TestAdviseOptionsValidate(t *testing.T) {
	tests := []struct {
		o       adviseOptions
		wantErr bool
	}{
		{adviseOptions{mysqlDSN: "root@tcp(127.0.0.1:3306)/", measureTime: 10 * time.Second}, false},
		{adviseOptions{mysqldDir: "/srv/db", measureTime: 10 * time.Second}, false},
		{adviseOptions{measureTime: 10 * time.Second}, true},
		{adviseOptions{mysqlDSN: "x", mysqldDir: "y", measureTime: 10 * time.Second}, true},
		{adviseOptions{mysqlDSN: "x", measureTime: time.Millisecond}, true},
	}
	for _, tt := range tests {
		if err := tt.o.Validate(); (err != nil) != tt.wantErr {
			t.Errorf("%+v.Validate() = %v; want error %v", tt.o, err, tt.wantErr)
		}
	}
}

// TestWritesPerSecondSkipsLayoutAndEdges: intervals without writes (file
// layout) and the partial first and last ones do not count.
func TestWritesPerSecondSkipsLayoutAndEdges(t *testing.T) {
	at := time.Unix(0, 0)
	snap := func(n int) workload.Snapshot {
		h := hist.New()
		for i := 0; i < n; i++ {
			h.Record(1000)
		}
		s := workload.Snapshot{Start: at, End: at.Add(time.Second), Ops: map[string]*hist.Histogram{"write": h}}
		at = at.Add(time.Second)
		return s
	}
	snaps := []workload.Snapshot{snap(0), snap(0), snap(10), snap(1000), snap(1200), snap(20)}
	if got := writesPerSecond(snaps); got != 1100 {
		t.Errorf("writesPerSecond() = %v; want 1100", got)
	}
	if got := writesPerSecond(nil); got != 0 {
		t.Errorf("writesPerSecond(nil) = %v; want 0", got)
	}
}

// TestAdviseOptionFile runs the command on an option file and this
// machine's disk.
func TestAdviseOptionFile(t *testing.T) {
	var out bytes.Buffer
	o := &adviseOptions{mysqldDir: "../../advise/testdata/mysqld", dataDir: t.TempDir(), measureTime: time.Second}
	if err := runAdvise(t.Context(), o, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[WARN] doublewrite-same-device") {
		t.Errorf("advise output lacks the doublewrite finding:\n%s", out.String())
	}
}
