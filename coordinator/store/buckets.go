package store

// Every bucket name, in one place.
//
//	meta                      "schema" -> uint32 schema version
//	runs                      run id -> writepathv1.Run
//	intervals/<run id>        phase index (u16) | seq (u32) -> writepathv1.MergedInterval
//	intervals/<run id>/workers  phase index (u16) | seq (u32) | worker name -> writepathv1.Interval
//	workers                   worker name -> writepathv1.WorkerInfo (last known)
//	campaigns                 campaign id -> writepathv1.Campaign (plan and progress)
//
// Run and campaign ids are fixed-width UTC timestamps, so byte order is time
// order. The campaigns bucket was added without a schema bump: Open creates
// it in older files, which is all the change needs.
var (
	bucketMeta      = []byte("meta")
	bucketRuns      = []byte("runs")
	bucketIntervals = []byte("intervals")
	bucketWorkers   = []byte("workers")
	bucketCampaigns = []byte("campaigns")
	// bucketRunWorkers is nested in each intervals/<run id> bucket.
	bucketRunWorkers = []byte("workers")

	keySchema = []byte("schema")
)

// schemaVersion is bumped when the layout changes incompatibly.
const schemaVersion uint32 = 1

var topBuckets = [][]byte{bucketMeta, bucketRuns, bucketIntervals, bucketWorkers, bucketCampaigns}
