package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/advise"
	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/telemetry/blockdev"
	"github.com/writepath/writepath/telemetry/mysqlstatus"
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

// TestAdviseCampaignsPlan: the campaign files advise suggests (scheduler
// on NVMe as a host knob, server settings on a managed server) parse and
// plan as `campaign run` would, and --campaigns writes them without
// overwriting.
func TestAdviseCampaignsPlan(t *testing.T) {
	nvme := blockdev.Info{Name: "nvme0n1", Disk: "nvme0n1", LogicalBlockSize: 512, PhysicalBlockSize: 4096,
		Scheduler: "mq-deadline", Schedulers: []string{"none", "mq-deadline"}, NrRequests: 1023}
	data := advise.Disk{Dir: "/var/lib/mysql", Device: "nvme0n1", Info: nvme}
	f := &advise.Facts{Source: "test", DataDir: "/var/lib/mysql", Data: data, Redo: data, Doublewrite: data,
		Vars: mysqlstatus.NewVariables(map[string]string{"version": "8.0.36", "innodb_flush_neighbors": "1",
			"innodb_log_write_ahead_size": "512"})}
	r := advise.NewReport(f)
	cs := r.Campaigns()
	var files []string
	for _, c := range cs {
		files = append(files, c.File)
		spec, err := campaign.Parse(c.File, []byte(c.Spec))
		if err != nil {
			t.Errorf("%s does not parse: %v\n%s", c.File, err, c.Spec)
			continue
		}
		if _, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: c.File, HostName: checkHostName}); err != nil {
			t.Errorf("%s does not plan: %v", c.File, err)
		}
		if len(spec.Expand()) != 2 {
			t.Errorf("%s: %d cells; want as found and as suggested", c.File, len(spec.Expand()))
		}
	}
	want := []string{"advise-log-write-ahead-size.yaml", "advise-flush-neighbors.yaml", "advise-nvme-scheduler.yaml"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("campaign files %v; want %v", files, want)
	}
	if sched := cs[len(cs)-1].Spec; !strings.Contains(sched, "host.scheduler: [mq-deadline, none]") || !strings.Contains(sched, "--data-dir /var/lib/writepath-advise --allow-host scheduler") {
		t.Errorf("scheduler campaign:\n%s", sched)
	}
	dir := t.TempDir()
	if err := writeAdviseCampaigns(dir, cs); err != nil {
		t.Fatal(err)
	}
	if err := writeAdviseCampaigns(dir, cs); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second write: %v; want refused, not overwritten", err)
	}
}
