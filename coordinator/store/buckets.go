package store

// Every bucket name, in one place.
//
//	meta                      "schema" -> uint32 schema version
//	runs                      run id -> writepathv1.Run
//	intervals/<run id>        phase index (u16) | seq (u32) -> writepathv1.MergedInterval
//	intervals/<run id>/workers  phase index (u16) | seq (u32) | worker name -> writepathv1.Interval
//	intervals/<run id>/worker_totals  phase index (u16) | worker name -> writepathv1.WorkerTotal
//	workers                   worker name -> writepathv1.WorkerInfo (last known)
//	campaigns                 campaign id -> writepathv1.Campaign (plan and progress)
//
// Run and campaign ids are fixed-width UTC timestamps, so byte order is time
// order. The campaigns bucket was added without a schema bump: Open creates
// it in older files, which is all the change needs. So was worker_totals:
// a run without it is read from its snapshots, and older code skips the
// nested bucket as it skips workers. Nested bucket names are longer than the
// 6-byte interval keys beside them, so the two never collide.
var (
	bucketMeta      = []byte("meta")
	bucketRuns      = []byte("runs")
	bucketIntervals = []byte("intervals")
	bucketWorkers   = []byte("workers")
	bucketCampaigns = []byte("campaigns")
	// bucketRunWorkers is nested in each intervals/<run id> bucket.
	bucketRunWorkers = []byte("workers")
	// bucketRunTotals is nested in each intervals/<run id> bucket too.
	bucketRunTotals = []byte("worker_totals")

	keySchema = []byte("schema")
)

// schemaVersion is bumped when the layout changes incompatibly.
const schemaVersion uint32 = 1

var topBuckets = [][]byte{bucketMeta, bucketRuns, bucketIntervals, bucketWorkers, bucketCampaigns}
