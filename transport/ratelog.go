package transport

import (
	"log/slog"
	"sync"
	"time"
)

// RefusedLogEvery is how often at most a kind of refused connection is
// logged; the ones in between are counted into the next line, so a flood
// of refused peers cannot flood the log.
const RefusedLogEvery = 10 * time.Second

// rateLog logs one message at most once per period, with how many were
// suppressed since the last line.
type rateLog struct {
	log    *slog.Logger
	msg    string
	period time.Duration

	mu struct {
		sync.Mutex
		last       time.Time
		suppressed int
	}
}

func newRateLog(log *slog.Logger, msg string) *rateLog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &rateLog{log: log, msg: msg, period: RefusedLogEvery}
}

// warn logs msg with args, or counts it when the last line was too recent.
func (r *rateLog) warn(now time.Time, args ...any) {
	r.mu.Lock()
	if !r.mu.last.IsZero() && now.Sub(r.mu.last) < r.period {
		r.mu.suppressed++
		r.mu.Unlock()
		return
	}
	n := r.mu.suppressed
	r.mu.last, r.mu.suppressed = now, 0
	r.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed_since_last", n)
	}
	r.log.Warn(r.msg, args...)
}
