package fio

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

var (
	_ workload.Checker = (*Workload)(nil)
	_ workload.Needer  = (*Workload)(nil)
)

// Check implements workload.Checker: the worker calls it when a spec is
// validated and assigned; Run resolves the same way and uses the result.
func (w *Workload) Check(env workload.Env) error {
	_, err := resolvePaths(w.spec, env)
	return err
}

// Needs implements workload.Needer: every directory and file the jobs
// name, absolute ones as given, relative ones under the data dir.
func (w *Workload) Needs(env workload.Env) workload.Needs {
	var n workload.Needs
	for _, j := range w.spec.GetJobs() {
		if j.GetDirectory() != "" {
			for _, d := range directories(j) {
				n.Paths = append(n.Paths, under(env.DataDir, d))
			}
		}
		if j.GetFilename() != "" {
			for i := range fileCount(j) {
				n.Paths = append(n.Paths, under(env.DataDir, clonePath(j, 0, i, cloneDir(j, 0))))
			}
		}
	}
	return n
}

// clonePaths are one clone's directory and files as the guard resolved
// them: what plan, layout and open use.
type clonePaths struct {
	dir   beneath.Path
	files []beneath.Path
}

// resolvePaths passes every directory and file the jobs name through env's
// guard (relative paths against the data dir, symlinks and ".." resolved
// first), checks that what the layout will write fits the free space of
// each directory's filesystem and that the buffers fit the memory budget,
// and returns each job's clones' resolved paths. It reads metadata only:
// no file is created or written.
func resolvePaths(spec *fiov1.Spec, env workload.Env) ([][]clonePaths, error) {
	var errs []error
	out := make([][]clonePaths, len(spec.GetJobs()))
	need := map[string]int64{} // resolved dir -> bytes the layout adds
	for i, j := range spec.GetJobs() {
		if l := j.GetLogs(); l != nil {
			// Log files are opened through the guard too (openLog); the
			// names differ only by their number.
			for _, p := range []string{l.GetLat(), l.GetBw(), l.GetIops(), l.GetHist()} {
				if _, err := env.Path(logFileName(p, "lat", l.GetPerJob(), 1)); p != "" && err != nil {
					errs = append(errs, fmt.Errorf("job %s: log: %w", j.GetName(), err))
				}
			}
		}
	clones:
		for n := 0; n < int(j.GetNumjobs()); n++ {
			dir := cloneDir(j, n)
			rdir, err := env.Path(dir)
			if err != nil {
				errs = append(errs, fmt.Errorf("job %s: directory=: %w", j.GetName(), err))
				out[i] = nil
				break
			}
			cp := clonePaths{dir: rdir}
			for k := range fileCount(j) {
				file, grow, err := jobFile(j, n, k, dir, env)
				if err != nil {
					errs = append(errs, err)
					out[i] = nil
					break clones // one refusal per job: the clones share the file name pattern
				}
				cp.files = append(cp.files, file)
				// The null engine lays nothing out; every clone of a named
				// file shares it.
				if !isNull(j) && (n == 0 || j.GetFilename() == "") {
					need[rdir.String()] += grow
				}
			}
			out[i] = append(out[i], cp)
		}
	}
	dirs := make([]string, 0, len(need))
	for d := range need {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if err := env.Space(d, need[d]); err != nil {
			errs = append(errs, fmt.Errorf("layout: %w", err))
		}
	}
	if err := env.Memory(bufferMemory(spec)); err != nil {
		errs = append(errs, fmt.Errorf("fio: %w", err))
	}
	return out, errors.Join(errs...)
}

// jobFile resolves clone n's file k and returns how many bytes its
// layout adds (at most).
func jobFile(j *fiov1.Job, n, k int, dir string, env workload.Env) (beneath.Path, int64, error) {
	path, err := env.Path(clonePath(j, n, k, dir))
	if err != nil {
		return beneath.Path{}, 0, fmt.Errorf("job %s: filename=: %w", j.GetName(), err)
	}
	want := int64(cloneOffset(j, n) + fileShare(j))
	st, err := path.Stat()
	switch {
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return path, 0, nil // a device: nothing is laid out
	case err == nil:
		return path, max(want-st.Size, 0), nil
	default:
		return path, want, nil
	}
}

// clonePath is file k of clone n of j, as written (relative to the data
// dir unless absolute): filename='s, or fio's name.N.K (filename_format=),
// in directory=.
func clonePath(j *fiov1.Job, n, k int, dir string) string {
	return joinRaw(dir, fileName(j, n, k))
}

// directories are directory='s names: a:b is two, split as filename= is.
func directories(j *fiov1.Job) []string {
	var out []string
	for _, d := range splitFilenames(j.GetDirectory()) {
		if d != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = []string{"."}
	}
	return out
}

// cloneDir is the directory of clone n's files: with directory=a:b the
// clones take the directories in turn, as fio's set_name_idx (by clone
// number); files named by filename= are all in the first.
func cloneDir(j *fiov1.Job, n int) string {
	dirs := directories(j)
	if j.GetFilename() != "" {
		return dirs[0]
	}
	return dirs[n%len(dirs)]
}

// fileShare is the most one file of j's clones holds (fileRegions gives
// each its share): its filesize=, else size= over the files, a block more
// for the first ones.
func fileShare(j *fiov1.Job) uint64 {
	if f := max(j.GetFilesize(), j.GetFilesizeMax()); f > 0 {
		return f
	}
	n := uint64(fileCount(j))
	if n == 1 {
		return j.GetSize()
	}
	return j.GetSize()/n + j.GetBs()
}

// FilePlan is every file a spec's clones use, in job order, as the worker
// will resolve them (relative paths are under the data directory): the
// one place that reads directory= and filename= for the files, so that
// callers (the command's disk telemetry) need not parse fio's options.
func FilePlan(spec *fiov1.Spec) []string {
	var out []string
	for _, j := range spec.GetJobs() {
		for n := 0; n < int(j.GetNumjobs()); n++ {
			for k := range fileCount(j) {
				out = append(out, clonePath(j, n, k, cloneDir(j, n)))
			}
		}
	}
	return out
}

// Files is FilePlan with relative paths under env's data directory, as the
// worker resolves them: what the embedded fabric samples the disks of.
func (w *Workload) Files(env workload.Env) []string {
	plan := FilePlan(w.spec)
	for i, f := range plan {
		plan[i] = under(env.DataDir, f)
	}
	return plan
}

// joinRaw puts a relative name under dir without cleaning: the guard must
// see any ".." as written, after the symlinks before it.
func joinRaw(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	return dir + "/" + name
}

// under is p, or p under dir when p is relative (uncleaned, as joinRaw).
func under(dir, p string) string {
	if dir == "" {
		dir = "."
	}
	return joinRaw(dir, p)
}
