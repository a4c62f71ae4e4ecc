package workload

// Traced is implemented by kinds whose I/O is done by another process (a
// managed database server): the worker's kernel tracer (package
// telemetry/blocktrace) follows the processes and redo files it names,
// asked when the phase starts and again at every interval, so a server
// restarted during a phase is followed from the next interval on.
type Traced interface {
	// TraceTargets returns what to follow now, on the worker whose Env
	// (DataDir) is env; it must be cheap, and safe to call from another
	// goroutine than Run's, also before Run starts.
	TraceTargets(env Env) TraceTargets
}

// TraceTargets names the processes of interest (their write-syscall sizes
// and fsync/fdatasync latency are traced) and the redo log files (block
// requests landing on their extents are counted as redo I/O).
type TraceTargets struct {
	PIDs      []int
	RedoFiles []string
}
