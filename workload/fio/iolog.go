package fio

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ioLog is fio's write_iolog: a version 3 I/O log ("usec file action
// [offset length]"), appended to as fio does (fopen "a"), written in whole
// lines from a buffer so that clones sharing the file never interleave
// inside a line, and nothing is allocated per I/O.
type ioLog struct {
	f    *os.File
	name string // the file's name as the log prints it
	buf  []byte
}

// ioLogHeader starts every log fio 3.33 writes.
const ioLogHeader = "fio version 3 iolog\n"

// openIOLog opens the clone's I/O log and logs the file's add and open.
func openIOLog(c *clone) error {
	f, err := openLog(c.env.Path, c.job.WriteIolog, false)
	if err != nil {
		return fmt.Errorf("job %s: write_iolog: %w", c.job.Name, err)
	}
	c.iolog = &ioLog{f: f, name: ioLogName(c.path), buf: make([]byte, 0, 64<<10)}
	c.iolog.buf = append(c.iolog.buf, ioLogHeader...)
	// the job's clock starts with its I/O; the files are added and opened
	// before, at its origin
	for _, cf := range c.files {
		c.iolog.name = ioLogName(cf.path)
		c.iolog.file(0, "add")
	}
	if len(c.files) == 1 {
		c.iolog.file(0, "open") // several files are opened as their turns come
	}
	c.iolog.name = ioLogName(c.path)
	return nil
}

// syncLogName is the log's word for a sync: fio's io_ddir_name.
func syncLogName(datasync bool) string {
	if datasync {
		return "datasync"
	}
	return "sync"
}

// ioLogName is a file's name as fio's I/O log prints it.
func ioLogName(path string) string { return strings.TrimPrefix(path, "./") }

func (l *ioLog) stamp(ns int64) {
	if len(l.buf) > cap(l.buf)-512 {
		l.flush()
	}
	l.buf = strconv.AppendInt(l.buf, max(ns, 0)/1000, 10)
	l.buf = append(l.buf, ' ')
	l.buf = append(l.buf, l.name...)
	l.buf = append(l.buf, ' ')
}

// file logs a file action (add, open, close).
func (l *ioLog) file(ns int64, what string) {
	l.stamp(ns)
	l.buf = append(l.buf, what...)
	l.buf = append(l.buf, '\n')
}

// io logs one I/O as it is issued: read, write, trim or sync.
func (l *ioLog) io(ns int64, what string, off, n uint64) {
	l.stamp(ns)
	l.buf = append(l.buf, what...)
	l.buf = append(l.buf, ' ')
	l.buf = strconv.AppendUint(l.buf, off, 10)
	l.buf = append(l.buf, ' ')
	l.buf = strconv.AppendUint(l.buf, n, 10)
	l.buf = append(l.buf, '\n')
}

func (l *ioLog) flush() {
	if len(l.buf) > 0 {
		_, _ = l.f.Write(l.buf)
		l.buf = l.buf[:0]
	}
}

// close logs the file's close and writes the log out.
func (l *ioLog) close(ns int64) error {
	l.file(ns, "close")
	return l.closeQuiet()
}

// closeQuiet writes the log out (its files were closed already).
func (l *ioLog) closeQuiet() error {
	l.flush()
	return l.f.Close()
}

// ioLogNames are the log's action words by op.
var ioLogNames = [...]string{dirRead: "read", dirWrite: "write", dirTrim: "trim", opSync: "sync"}
