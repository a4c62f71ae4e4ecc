package coordinator

import (
	"slices"
	"sync"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// watchQueue is how many events a watcher may fall behind before it is
// dropped; a watcher never slows a run down.
const watchQueue = 1024

// watchers fans a run's events out to its live watchers.
type watchers struct {
	mu struct {
		sync.Mutex
		subs   map[chan *writepathv1.WatchRunResponse]bool
		closed bool
		// unstored are the merged intervals published and not yet
		// committed, in order: a watcher that subscribes now missed
		// their broadcast and will not find them in the store. At most
		// the writer's queue (writeQueue) and its batch.
		unstored []*writepathv1.MergedInterval
	}
}

// subscribe returns a channel of events, closed when the run ends or the
// watcher fell behind, or nil if the run has already ended; and the merged
// intervals published before it that the store may not hold yet.
func (w *watchers) subscribe() (<-chan *writepathv1.WatchRunResponse, []*writepathv1.MergedInterval, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil, nil, func() {}
	}
	if w.mu.subs == nil {
		w.mu.subs = map[chan *writepathv1.WatchRunResponse]bool{}
	}
	ch := make(chan *writepathv1.WatchRunResponse, watchQueue)
	w.mu.subs[ch] = true
	return ch, slices.Clone(w.mu.unstored), func() { w.drop(ch) }
}

// publish broadcasts a merged interval and keeps it until stored.
func (w *watchers) publish(mi *writepathv1.MergedInterval) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return
	}
	// Under the lock with the broadcast: a subscriber gets mi either
	// from the list or from its channel, once.
	w.mu.unstored = append(w.mu.unstored, mi)
	w.broadcastLocked(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Interval{Interval: mi}})
}

// stored forgets merged intervals the store now holds (or failed to: a
// watcher joining later then misses them as the store does).
func (w *watchers) stored(mis []*writepathv1.MergedInterval) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.unstored = slices.DeleteFunc(w.mu.unstored, func(mi *writepathv1.MergedInterval) bool {
		return slices.Contains(mis, mi)
	})
}

func (w *watchers) drop(ch chan *writepathv1.WatchRunResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.subs[ch] {
		delete(w.mu.subs, ch)
		close(ch)
	}
}

// broadcast sends ev to every watcher without blocking.
func (w *watchers) broadcast(ev *writepathv1.WatchRunResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broadcastLocked(ev)
}

func (w *watchers) broadcastLocked(ev *writepathv1.WatchRunResponse) {
	for ch := range w.mu.subs {
		select {
		case ch <- ev:
		default:
			delete(w.mu.subs, ch)
			close(ch)
		}
	}
}

// close ends every subscription; later subscribers get nil.
func (w *watchers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.closed = true
	w.mu.unstored = nil
	for ch := range w.mu.subs {
		delete(w.mu.subs, ch)
		close(ch)
	}
}
