package crash

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writepath/writepath/powerloss"
)

// PowerCut is what a power cut did in one round: the layer's reports of
// every mount, merged, with data files told apart from redo.
type PowerCut struct {
	Torn bool `json:"torn"`
	// Seed drove the torn prefixes (0 without torn writes).
	Seed int64 `json:"seed,omitempty"`
	// Mounts are the backing directories that were behind the layer.
	Mounts       []string `json:"mounts"`
	DroppedBytes int64    `json:"dropped_bytes"` // un-synced bytes that never reached the disk
	KeptBytes    int64    `json:"kept_bytes"`    // bytes of torn prefixes written anyway
	DroppedOps   int      `json:"dropped_ops"`   // namespace operations undone
	TornWrites   int      `json:"torn_writes"`   // overwrites kept only in part, all files
	// DataTornWrites counts torn overwrites of tablespace files (.ibd,
	// undo*): torn pages InnoDB must detect or repair. SystemTornWrites
	// counts those of the system tablespace (ibdata*), which holds the
	// doublewrite buffer too: a torn doublewrite batch tears no page.
	DataTornWrites   int `json:"data_torn_writes"`
	SystemTornWrites int `json:"system_torn_writes"`
	// DirtyDataBytes, DirtySystemBytes and DirtyRedoBytes are the
	// un-synced bytes of each class of file at the cut (after the kill).
	DirtyDataBytes   int64 `json:"dirty_data_bytes"`
	DirtySystemBytes int64 `json:"dirty_system_bytes"`
	DirtyRedoBytes   int64 `json:"dirty_redo_bytes"`
	// Files are the files that had un-synced writes, path prefixed by the
	// mount's role ("data/sbtest/sbtest1.ibd").
	Files []powerloss.FileCut `json:"files,omitempty"`
	// Layer counts what went through the layer during the round.
	LayerWrites int64 `json:"layer_writes"`
	LayerFsyncs int64 `json:"layer_fsyncs"`
	// Wait is the --cut-when-dirty wait before the kill (nil: no wait).
	Wait *DirtyWait `json:"wait,omitempty"`
}

// DirtyWait is how the kill moment was chosen with --cut-when-dirty.
type DirtyWait struct {
	WaitedMS float64 `json:"waited_ms"` // after the planned kill moment
	Polls    int     `json:"polls"`
	TimedOut bool    `json:"timed_out"` // killed without seeing data files dirty
	// Seen are the files with un-synced bytes at the poll that chose the
	// kill (InnoDB may still have synced some before the kill landed; the
	// cut's Files are what really was lost).
	Seen []powerloss.FileDirty `json:"seen,omitempty"`
}

// File classes of the InnoDB files behind the layer.
const (
	classData   = "data"   // tablespaces: .ibd, undo tablespaces
	classSystem = "system" // ibdata*: system pages, undo logs, the doublewrite buffer
	classRedo   = "redo"
	classOther  = "other"
)

// fileClass tells InnoDB tablespaces from the system tablespace, redo
// logs and the rest. Tablespaces are told apart because with doublewrite
// on their pages are written only once the doublewrite copy is durable:
// un-synced writes there are the ones a torn cut can damage.
func fileClass(path string) string {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "ib_logfile"), strings.HasPrefix(base, "#ib_redo"):
		return classRedo
	case strings.HasPrefix(base, "ibdata"):
		return classSystem
	case strings.HasSuffix(base, ".ibd"), strings.HasPrefix(base, "undo"):
		return classData
	}
	return classOther
}

// add folds the report of the mount of role in.
func (c *PowerCut) add(role string, rep powerloss.CutReport) {
	c.DroppedBytes += rep.DroppedBytes
	c.KeptBytes += rep.KeptBytes
	c.DroppedOps += rep.DroppedOps
	c.TornWrites += rep.TornWrites
	c.LayerWrites += rep.Before.Writes
	c.LayerFsyncs += rep.Before.Fsyncs
	for _, f := range rep.Files {
		switch fileClass(f.Path) {
		case classData:
			c.DirtyDataBytes += f.DirtyBytes
			c.DataTornWrites += f.TornWrites
		case classSystem:
			c.DirtySystemBytes += f.DirtyBytes
			c.SystemTornWrites += f.TornWrites
		case classRedo:
			c.DirtyRedoBytes += f.DirtyBytes
		}
		f.Path = role + "/" + f.Path
		c.Files = append(c.Files, f)
	}
}

// dataDirty returns the tablespace files of st with un-synced bytes.
func dataDirty(st powerloss.Stats) []powerloss.FileDirty {
	var out []powerloss.FileDirty
	for _, f := range st.Dirty {
		if f.DirtyBytes > 0 && fileClass(f.Path) == classData {
			out = append(out, f)
		}
	}
	return out
}

// String is the cut in one line, for progress and the text report.
func (c *PowerCut) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "power cut: dropped %s in %d file(s) (un-synced at the cut: tablespaces %s, ibdata %s, redo %s), %d namespace op(s) undone",
		sizeOf(c.DroppedBytes), len(c.Files), sizeOf(c.DirtyDataBytes), sizeOf(c.DirtySystemBytes), sizeOf(c.DirtyRedoBytes), c.DroppedOps)
	if c.Torn {
		fmt.Fprintf(&b, "; torn (seed %d): kept %s of prefixes, %d torn write(s): %d in tablespaces, %d in ibdata",
			c.Seed, sizeOf(c.KeptBytes), c.TornWrites, c.DataTornWrites, c.SystemTornWrites)
	}
	if w := c.Wait; w != nil {
		if w.TimedOut {
			fmt.Fprintf(&b, "; no tablespace was dirty within %.0f ms (%d polls): killed anyway", w.WaitedMS, w.Polls)
		} else {
			fmt.Fprintf(&b, "; killed %.1f ms after the planned moment, when %d tablespace(s) were dirty", w.WaitedMS, len(w.Seen))
		}
	}
	return b.String()
}

// sizeOf is n bytes for humans.
func sizeOf(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
