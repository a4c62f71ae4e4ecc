package crash

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/powerloss"
	"github.com/writepath/writepath/workload/crash/innodbpage"
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
	// TornPages are the InnoDB pages the cut left half-written (at most
	// maxTornPages), each with what the durable doublewrite buffer held of
	// it; CheckpointLSN is the redo checkpoint the recovery starts from.
	// Read from the backing files right after the cut (MariaDB only).
	// InspectError says what could not be read.
	TornPages     []TornPage `json:"torn_pages,omitempty"`
	CheckpointLSN uint64     `json:"checkpoint_lsn,omitempty"`
	InspectError  string     `json:"inspect_error,omitempty"`
}

// TornPage is one page that a torn cut left half-written: a write of it
// kept a prefix that ends inside the page.
type TornPage struct {
	File string `json:"file"` // as in PowerCut.Files: the mount's role, then the path in it
	Path string `json:"path"` // the backing file
	Page uint32 `json:"page"`
	// SpaceID is the tablespace id in the page's header (its first 4 KiB,
	// which the tear kept).
	SpaceID uint32 `json:"space_id"`
	Kept    int64  `json:"kept"`    // bytes of the page's new content that reached the disk
	OnDisk  string `json:"on_disk"` // valid, corrupt or zero after the cut
	// Copy: the durable doublewrite buffer holds an intact copy of the
	// page, whose FIL_PAGE_LSN is CopyLSN. CopyUsable: the copy is not
	// older than the checkpoint, so recovery may restore the page from it.
	Copy       bool   `json:"copy"`
	CopyLSN    uint64 `json:"copy_lsn,omitempty"`
	CopyUsable bool   `json:"copy_usable"`
}

// String is the page and what survived of it, in one line.
func (tp TornPage) String() string {
	s := fmt.Sprintf("%s page %d (space %d): %d bytes of the new page kept, on disk %s; ", tp.File, tp.Page, tp.SpaceID, tp.Kept, tp.OnDisk)
	switch {
	case tp.CopyUsable:
		return s + fmt.Sprintf("the doublewrite buffer holds a usable copy (LSN %d)", tp.CopyLSN)
	case tp.Copy:
		return s + fmt.Sprintf("the doublewrite buffer holds a copy older than the checkpoint (LSN %d)", tp.CopyLSN)
	}
	return s + "no copy in the doublewrite buffer"
}

// maxLostKept bounds the lost writes a result keeps per file (the layer
// reports up to 256): a run of many rounds must stay a small summary.
const maxLostKept = 32

// trimLost keeps at most maxLostKept lost writes per file, torn ones
// first, in write order, and counts the rest in LostOmitted.
func (c *PowerCut) trimLost() {
	for i := range c.Files {
		fc := &c.Files[i]
		if len(fc.Lost) <= maxLostKept {
			continue
		}
		keep := make(map[int]bool, maxLostKept)
		for _, torn := range []bool{true, false} {
			for j, w := range fc.Lost {
				if w.Torn == torn && len(keep) < maxLostKept {
					keep[j] = true
				}
			}
		}
		var out []powerloss.LostWrite
		for j, w := range fc.Lost {
			if keep[j] {
				out = append(out, w)
			}
		}
		fc.LostOmitted += len(fc.Lost) - len(out)
		fc.Lost = out
	}
}

// maxTornPages bounds PowerCut.TornPages.
const maxTornPages = 64

// innodbFiles are the backing files the torn-page inspection reads.
type innodbFiles struct {
	ibdata string            // the first system tablespace file: the doublewrite buffer
	redo   string            // ib_logfile0
	roots  map[string]string // mount role -> backing directory
}

// innodbFilesOf locates the first system tablespace file and the redo
// log from the cell's settings, as the server does: innodb_data_home_dir
// and innodb_log_group_home_dir, relative to the datadir, default the
// datadir; the first file of innodb_data_file_path, default ibdata1.
func innodbFilesOf(datadir string, settings []mysqld.Setting, l powerLayout) innodbFiles {
	dir := func(key string) string {
		v, ok := lastSetting(settings, key)
		switch {
		case !ok:
			return datadir
		case filepath.IsAbs(v):
			return v
		}
		return filepath.Join(datadir, v)
	}
	first := "ibdata1"
	if v, ok := lastSetting(settings, "innodb_data_file_path"); ok {
		if name, _, _ := strings.Cut(strings.Split(v, ";")[0], ":"); name != "" {
			first = name
		}
	}
	f := innodbFiles{ibdata: filepath.Join(dir("innodb_data_home_dir"), first),
		redo: filepath.Join(dir("innodb_log_group_home_dir"), "ib_logfile0"), roots: map[string]string{}}
	for _, m := range l.mounts {
		f.roots[m.role] = m.backing
	}
	return f
}

// inspectTorn finds the pages the cut tore, from the lost writes of the
// tablespace and system files, and reads each page and the doublewrite
// buffer from the backing files. What it cannot read goes to
// InspectError; the round goes on.
func (c *PowerCut) inspectTorn(files innodbFiles) {
	var errs []error
	defer func() {
		if err := errors.Join(errs...); err != nil {
			c.InspectError = err.Error()
		}
	}()
	sysFmt, err := innodbpage.ReadFormat(files.ibdata)
	if err != nil {
		errs = append(errs, err)
		return
	}
	var dblwr *innodbpage.Doublewrite
	seen := map[string]bool{}
	for _, fc := range c.Files {
		class := fileClass(fc.Path)
		if class != classData && class != classSystem {
			continue
		}
		role, rel, _ := strings.Cut(fc.Path, "/")
		root, ok := files.roots[role]
		if !ok {
			continue
		}
		path := filepath.Join(root, rel)
		f := sysFmt
		if class == classData {
			if f, err = innodbpage.ReadFormat(path); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		ps := int64(f.PageSize)
		for _, w := range fc.Lost {
			tear := w.Offset + w.Kept
			if !w.Torn || tear%ps == 0 || len(c.TornPages) >= maxTornPages {
				continue
			}
			if dblwr == nil {
				if dblwr, err = innodbpage.ReadDoublewrite(files.ibdata, sysFmt); err != nil {
					errs = append(errs, err)
					return
				}
				if c.CheckpointLSN, err = innodbpage.RedoCheckpoint(files.redo); err != nil {
					errs = append(errs, err)
				}
			}
			page := uint32(tear / ps)
			key := fmt.Sprintf("%s:%d", path, page)
			if class == classSystem && dblwr.InArea(page) || seen[key] {
				continue // the doublewrite buffer itself needs no copy; a page torn twice is one page
			}
			seen[key] = true
			tp := TornPage{File: fc.Path, Path: path, Page: page, Kept: tear - int64(page)*ps}
			buf := make([]byte, ps)
			if err := innodbpage.ReadAt(path, buf, int64(page)*ps); err != nil {
				errs = append(errs, err)
				continue
			}
			tp.SpaceID = innodbpage.SpaceID(buf)
			tp.OnDisk = f.State(buf)
			if cp, ok := dblwr.CopyOf(tp.SpaceID, page, f); ok {
				tp.Copy, tp.CopyLSN = true, cp.LSN
				tp.CopyUsable = c.CheckpointLSN != 0 && cp.LSN >= c.CheckpointLSN
			}
			c.TornPages = append(c.TornPages, tp)
		}
	}
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
	if n := len(c.TornPages); n > 0 {
		usable := 0
		for _, tp := range c.TornPages {
			if tp.CopyUsable {
				usable++
			}
		}
		fmt.Fprintf(&b, "; %d torn page(s), %d with a usable doublewrite copy", n, usable)
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
