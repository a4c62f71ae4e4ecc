package errlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Defaults of the live error-log tail.
const (
	// tailPoll is how often the tail reads new bytes: the resolution of
	// every arrival time on the timeline.
	tailPoll = 5 * time.Millisecond
	// partialIdle is how long a line without its newline may sit before it
	// is taken as complete (MariaDB's Version line has none; the next record
	// then arrives as a new line).
	partialIdle = 50 * time.Millisecond
)

// Tail follows a server's error log while it starts, stamping each line
// with the moment it was read. Start it before the server process so the
// first line is not missed; Stop it once the server is ready (or failed).
type Tail struct {
	path  string
	clock func() time.Time
	done  chan struct{}
	stop  context.CancelFunc

	mu struct {
		sync.Mutex
		off     int64  // bytes of the file consumed
		partial []byte // a line still missing its newline
		since   time.Time
		parser  Parser
		scan    Scanner
		err     error
	}
}

// StartTail begins following path from byte offset off (the log's size
// before the start, so earlier starts are not re-read). port and socket
// are the server's real TCP port and Unix socket. The tail stops when ctx ends or Stop is called.
func StartTail(ctx context.Context, path string, off int64, port int, socket string) *Tail {
	ctx, cancel := context.WithCancel(ctx)
	t := &Tail{path: path, clock: time.Now, done: make(chan struct{}), stop: cancel}
	t.mu.off = off
	t.mu.scan = Scanner{Port: port, Socket: socket}
	go t.run(ctx)
	return t
}

func (t *Tail) run(ctx context.Context) {
	defer close(t.done)
	tick := time.NewTicker(tailPoll)
	defer tick.Stop()
	for {
		t.poll()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// poll reads what was appended since the last call.
func (t *Tail) poll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	data, err := readFrom(t.path, t.mu.off)
	now := t.clock()
	if err != nil {
		t.mu.err = err
		return
	}
	t.mu.off += int64(len(data))
	t.feedLocked(data, now)
}

// feedLocked splits data into lines; the arrival of a line is the moment
// its newline was read.
func (t *Tail) feedLocked(data []byte, now time.Time) {
	if len(data) > 0 {
		if len(t.mu.partial) == 0 {
			t.mu.since = now
		}
		t.mu.partial = append(t.mu.partial, data...)
	}
	for {
		i := bytes.IndexByte(t.mu.partial, '\n')
		if i < 0 {
			break
		}
		t.lineLocked(string(t.mu.partial[:i]), now)
		t.mu.partial = t.mu.partial[i+1:]
		t.mu.since = now
	}
	if len(t.mu.partial) > 0 && now.Sub(t.mu.since) >= partialIdle {
		t.lineLocked(string(t.mu.partial), t.mu.since)
		t.mu.partial = nil
	}
}

func (t *Tail) lineLocked(line string, at time.Time) {
	for _, ev := range t.mu.parser.Line(line, at) {
		t.mu.scan.Add(ev)
	}
}

// readFrom returns the bytes of path from off to its end; a missing file
// reads as empty (the server has not created it yet).
func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tail error log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("tail error log %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLine*4))
	if err != nil {
		return nil, fmt.Errorf("tail error log %s: %w", path, err)
	}
	return data, nil
}

// Recovery returns what the tail has matched so far.
func (t *Tail) Recovery() Recovery {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.scan.Recovery()
}

// WaitReady waits until the ready line on the real port has been read, at
// most d (the server may already answer a moment before its line is read).
func (t *Tail) WaitReady(ctx context.Context, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(tailPoll)
	defer tick.Stop()
	for {
		if t.Recovery().Ready != nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

// Stop ends the tail after a last read, takes any pending partial line as
// complete, and returns the result. It is safe to call twice.
func (t *Tail) Stop() (Recovery, error) {
	t.stop()
	<-t.done
	t.poll()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.mu.partial) > 0 {
		t.lineLocked(string(t.mu.partial), t.mu.since)
		t.mu.partial = nil
	}
	for _, ev := range t.mu.parser.Flush() {
		t.mu.scan.Add(ev)
	}
	return t.mu.scan.Recovery(), t.mu.err
}
