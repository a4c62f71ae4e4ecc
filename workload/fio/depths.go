package fio

import fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"

// depths are a queueing job's iodepth_batch_submit,
// iodepth_batch_complete_min/max and iodepth_low as fio 3.33's
// fixup_options leaves them: a batch or low mark of 0 or above iodepth is
// iodepth, a maximum below the minimum is the minimum.
type depths struct {
	depth, submit, cmin, cmax, low int
}

func depthsOf(j *fiov1.Job) depths {
	d := max(int(j.Iodepth), 1)
	q := depths{depth: d, submit: int(j.IodepthBatchSubmit), cmin: int(j.IodepthBatchCompleteMin),
		cmax: int(j.IodepthBatchCompleteMax), low: int(j.IodepthLow)}
	if q.low == 0 || q.low > d {
		q.low = d
	}
	if q.submit == 0 || q.submit > d {
		q.submit = d
	}
	q.cmax = max(q.cmax, q.cmin)
	return q
}

// reapRange is how many completions one wait asks the kernel for with
// inflight requests flying: at least iodepth_batch_complete_min (and at
// least one: the queue is full), at most iodepth_batch_complete_max, as
// fio's wait_for_completions and td_io_getevents clip them.
func (q depths) reapRange(inflight int) (lo, hi int) {
	lo = min(q.cmin, inflight)
	if lo == 0 {
		lo = 1
	}
	return lo, max(min(q.cmax, inflight), lo)
}

// isDefault reports whether the job queues as fio's defaults do (submit
// each request as it is prepared, reap one completion, refill): what the
// engines without batching (null, offload, posixaio) run.
func (q depths) isDefault() bool {
	return q.submit == 1 && q.cmin == 1 && q.cmax == 1 && q.low == q.depth
}

// checkDepths refuses batching on the engines that do not batch: the null
// engine at iodepth > 1 and the
// offload pool (io_submit_mode=offload, posixaio). The synchronous engines
// run at iodepth 1, where fio's fixup makes every batch 1 too.
func checkDepths(j *fiov1.Job) {
	q := depthsOf(j)
	queued := j.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING
	if q.depth == 1 || queued && !j.SubmitOffload || q.isDefault() {
		return
	}
	refuse(j, "iodepth_batch_submit", "", j.Origin,
		"iodepth_batch_submit, iodepth_batch_complete_min/max and iodepth_low are built for libaio and io_uring; this engine queues as fio's defaults only")
}
