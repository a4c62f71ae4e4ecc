package hostknob

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/writepath/writepath/telemetry/blockdev"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// queue is one request queue's sysfs directory and what the value checks
// need of it.
type queue struct {
	name       string // as /proc/diskstats spells it ("loop0", "nvme0n1")
	dir        string // <sys>/class/block/<name>/queue
	scheduler  string
	schedulers []string
	tags       int64 // hardware tag depth (mq/*/nr_tags, the least); 0 unknown
}

// targets are the things behind a directory that knobs act on.
type targets struct {
	top    *queue   // the device the filesystem is on; nil without one
	leaves []*queue // where requests queue: the disks under a dm/md stack, else top
	noDev  error    // why there is no block device, when there is none
	mount  diskstats.Mount
}

// resolve finds the queues and the mount behind dir.
func (h *Host) resolve(dir string) (*targets, error) {
	r := h.resolver()
	m, err := r.MountOf(dir)
	if err != nil {
		return nil, fmt.Errorf("host knobs: %w", err)
	}
	t := &targets{mount: m}
	devs, err := r.Paths(dir)
	switch {
	case errors.Is(err, diskstats.ErrNoBlockDevice):
		t.noDev = fmt.Errorf("%w: %s is on %s (%s), which has no block device", ErrUnavailable, dir, m.FSType, m.Source)
		return t, nil
	case err != nil:
		return nil, fmt.Errorf("host knobs: devices behind %s: %w", dir, err)
	}
	d := devs[0]
	if t.top, err = h.queue(d.Name); err != nil {
		return nil, err
	}
	if len(d.Slaves) == 0 {
		t.leaves = []*queue{t.top}
		return t, nil
	}
	for _, s := range d.Slaves {
		q, err := h.queue(s)
		if err != nil {
			return nil, err
		}
		t.leaves = append(t.leaves, q)
	}
	return t, nil
}

// queue reads one device's queue directory.
func (h *Host) queue(name string) (*queue, error) {
	sysName := strings.ReplaceAll(name, "/", "!")
	dev := filepath.Join(h.cfg.SysDir, "class", "block", sysName)
	q := &queue{name: name, dir: filepath.Join(dev, "queue")}
	if _, err := os.Stat(q.dir); err != nil {
		return nil, fmt.Errorf("host knobs: %s has no request queue: %w", name, err)
	}
	if b, err := os.ReadFile(filepath.Join(q.dir, "scheduler")); err == nil {
		q.scheduler, q.schedulers = blockdev.ParseScheduler(string(b))
	}
	tags, _ := filepath.Glob(filepath.Join(dev, "mq", "*", "nr_tags"))
	for _, p := range tags {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && (q.tags == 0 || n < q.tags) {
			q.tags = n
		}
	}
	return q, nil
}

// queuesFor returns the queues a knob of scope sc acts on.
func (t *targets) queuesFor(sc scope) ([]*queue, error) {
	if t.noDev != nil {
		return nil, t.noDev
	}
	if sc == queueTop {
		return []*queue{t.top}, nil
	}
	return t.leaves, nil
}

// attr is one sysfs or procfs file a knob writes.
func (q *queue) attr(name string) string { return filepath.Join(q.dir, name) }

// readAttr reads a knob file as the kernel shows it, canonical: the
// active scheduler without the list, the rest trimmed. A missing file is
// ErrUnavailable.
func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: the kernel has no %s", ErrUnavailable, path)
	}
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if filepath.Base(path) == "scheduler" {
		v, _ = blockdev.ParseScheduler(v)
	}
	return v, nil
}
