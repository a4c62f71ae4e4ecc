package fio

import "github.com/writepath/writepath/workload"

// tables is how fio's runs read (workload.Meta.Tables): I/O operations,
// IOPS, and a campaign cell's MB/s and syncs' p99 beside its p99.
func tables() workload.Tables {
	return workload.Tables{Unit: "iops", Columns: []string{"throughput", "MB/s", "p99", "fsync p99", "dev p99", "delta"}}
}
