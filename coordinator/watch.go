package coordinator

import (
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
	}
}

// subscribe returns a channel of events, closed when the run ends or the
// watcher fell behind, or nil if the run has already ended.
func (w *watchers) subscribe() (<-chan *writepathv1.WatchRunResponse, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil, func() {}
	}
	if w.mu.subs == nil {
		w.mu.subs = map[chan *writepathv1.WatchRunResponse]bool{}
	}
	ch := make(chan *writepathv1.WatchRunResponse, watchQueue)
	w.mu.subs[ch] = true
	return ch, func() { w.drop(ch) }
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
	for ch := range w.mu.subs {
		delete(w.mu.subs, ch)
		close(ch)
	}
}
