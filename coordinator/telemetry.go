package coordinator

import (
	"slices"
	"strings"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// addTelemetry adds one worker's telemetry and gauges to a merged
// interval's list, kept in worker order. Telemetry is never summed: a
// device's rates belong to its host (two hosts' sda are different disks),
// and a gauge read from a server that several workers share would count
// once per worker. The summed gauges stay in MergedInterval.gauges for
// kinds whose gauges do add up (threads). Nothing is added for a worker
// that sent neither.
func addTelemetry(list []*writepathv1.WorkerTelemetry, worker string, iv *writepathv1.Interval) []*writepathv1.WorkerTelemetry {
	if iv.GetTelemetry() == nil && len(iv.GetGauges()) == 0 {
		return list
	}
	wt := &writepathv1.WorkerTelemetry{Worker: worker, Telemetry: iv.GetTelemetry(), Gauges: iv.GetGauges()}
	i, _ := slices.BinarySearchFunc(list, worker, func(t *writepathv1.WorkerTelemetry, w string) int {
		return strings.Compare(t.GetWorker(), w)
	})
	return slices.Insert(list, i, wt)
}
