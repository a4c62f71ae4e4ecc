package oltp

import "github.com/writepath/writepath/workload"

// tables is how oltp's runs read (workload.Meta.Tables): transactions,
// with sysbench's p95 beside p99.
func tables() workload.Tables {
	return workload.Tables{Txn: true, Columns: []string{"throughput", "p95", "p99", "dev p99", "delta"}}
}
