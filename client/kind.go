package client

// Kind is what a run's kind declares of how its runs read
// (workload.Meta's Tables and Figures). Client links no kind, so the
// command that does hands it this from the kind's Meta; the zero value
// is a kind of I/O operations with the default campaign columns and no
// figures of its own.
type Kind struct {
	// Txn: the kind's primary operation is a transaction (TxnOp): its
	// lines, summaries and comparisons count transactions per second and
	// show sysbench's p95 beside p99.
	Txn bool
	// Unit is its campaign tables' throughput unit; "" is "tps".
	Unit string
	// Columns are its campaign table's columns per group, by report's
	// names (report.KindColumns); nil: report's default.
	Columns []string
	// Figures reads a worker's summary of the measured phase into the
	// kind's figures a campaign table aggregates; nil: none.
	Figures func(summary []byte) (map[string][]float64, error)
}

// unit is k's campaign throughput unit.
func (k Kind) unit() string {
	if k.Unit == "" {
		return "tps"
	}
	return k.Unit
}
