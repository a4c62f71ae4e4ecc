package diskstats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// DefaultPath is where the kernel publishes the counters.
const DefaultPath = "/proc/diskstats"

// Interval is one device's counter increase over [Start, End).
type Interval struct {
	Device     string
	Start, End time.Time
	Delta      Delta
}

// Stats returns the interval's iostat -x figures.
func (iv Interval) Stats() Stats { return iv.Delta.Stats(iv.End.Sub(iv.Start)) }

// Sampler reads the counters of a fixed set of devices. Each Sample returns
// the increase since the previous one (the first since NewSampler). It keeps
// the file open and reuses its buffers, so a Sample does not allocate when
// dst has room. A Sampler is not safe for concurrent use; one goroutine (the
// worker's interval loop) owns it.
type Sampler struct {
	path  string
	f     *os.File
	buf   []byte
	names [][]byte // diskstats names of the devices, in order
	devs  []string
	prev  []Counters
	cur   []Counters
	seen  []bool
	last  time.Time
}

// NewSampler opens path (DefaultPath outside tests) and takes the first
// reading of devices, given by their /proc/diskstats names ("nvme0n1",
// "dm-0"; see Resolver for paths). It fails if a device is missing.
func NewSampler(path string, devices []string) (*Sampler, error) {
	if len(devices) == 0 {
		return nil, fmt.Errorf("diskstats sampler: no devices given")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("diskstats sampler: %w", err)
	}
	s := &Sampler{path: path, f: f, buf: make([]byte, 16<<10), devs: dedupe(devices)}
	for _, d := range s.devs {
		s.names = append(s.names, []byte(d))
	}
	n := len(s.devs)
	s.prev, s.cur, s.seen = make([]Counters, n), make([]Counters, n), make([]bool, n)
	if s.last, err = s.read(s.prev); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Devices returns the sampled device names, in the order Sample reports them.
func (s *Sampler) Devices() []string { return append([]string(nil), s.devs...) }

// Sample reads the counters now and appends one Interval per device to dst,
// covering the time since the previous reading.
func (s *Sampler) Sample(dst []Interval) ([]Interval, error) {
	now, err := s.read(s.cur)
	if err != nil {
		return dst, err
	}
	for i := range s.devs {
		dst = append(dst, Interval{Device: s.devs[i], Start: s.last, End: now, Delta: Diff(&s.prev[i], &s.cur[i])})
	}
	s.prev, s.cur, s.last = s.cur, s.prev, now
	return dst, nil
}

// Close releases the file. It is safe to call twice.
func (s *Sampler) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// read re-reads the whole file and parses the wanted lines into into. The
// time is taken just before the read: the kernel computes every line's
// counters from the moment it formats it, microseconds later.
func (s *Sampler) read(into []Counters) (time.Time, error) {
	if s.f == nil {
		return time.Time{}, fmt.Errorf("diskstats sampler: closed")
	}
	now := time.Now()
	data, err := s.readAll()
	if err != nil {
		return now, fmt.Errorf("read %s: %w", s.path, err)
	}
	clear(s.seen)
	for len(data) > 0 {
		var line []byte
		line, data = nextLine(data)
		if err := s.parseWanted(line, into); err != nil {
			return now, fmt.Errorf("%s: %w", s.path, err)
		}
	}
	for i, ok := range s.seen {
		if !ok {
			return now, fmt.Errorf("%s: device %s: %w", s.path, s.devs[i], ErrNoDevice)
		}
	}
	return now, nil
}

// parseWanted parses line into into[i] if it names the i-th device.
func (s *Sampler) parseWanted(line []byte, into []Counters) error {
	_, rest := field(line)
	_, rest = field(rest)
	name, _ := field(rest)
	for i, want := range s.names {
		if !bytes.Equal(name, want) {
			continue
		}
		_, c, err := ParseLine(line)
		if err != nil {
			return fmt.Errorf("device %s: %w", s.devs[i], err)
		}
		into[i], s.seen[i] = c, true
		return nil
	}
	return nil
}

// readAll reads the file from offset 0 into s.buf, growing it if needed.
// Re-reading an open procfs file from offset 0 regenerates its contents.
func (s *Sampler) readAll() ([]byte, error) {
	n := 0
	for {
		m, err := s.f.ReadAt(s.buf[n:], int64(n))
		n += m
		if errors.Is(err, io.EOF) || (err == nil && m == 0) {
			return s.buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
		if n == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
	}
}

// dedupe drops repeated names, keeping the first, and maps sysfs names
// ("cciss!c0d0") to diskstats names ("cciss/c0d0").
func dedupe(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ReplaceAll(n, "!", "/")
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
