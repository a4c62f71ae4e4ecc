package fio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

var _ workload.Checker = (*Workload)(nil)

// Check implements workload.Checker: the worker calls it when a spec is
// validated and assigned, Run calls it again before planning.
func (w *Workload) Check(env workload.Env) error { return resolvePaths(w.spec, env) }

// resolvePaths passes every directory and file the jobs name through env's
// guard (relative paths against the data dir, symlinks and ".." resolved
// first), then checks that what the layout will write fits the free space
// of each directory's filesystem. It reads metadata only: no file is
// created or written.
func resolvePaths(spec *fiov1.Spec, env workload.Env) error {
	var errs []error
	need := map[string]int64{} // resolved dir -> bytes the layout adds
	for _, j := range spec.GetJobs() {
		dir := j.GetDirectory()
		if dir == "" {
			dir = "."
		}
		rdir, err := env.Path(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: directory=: %w", j.GetName(), err))
			continue
		}
		for n := 0; n < int(j.GetNumjobs()); n++ {
			grow, err := jobFile(j, n, dir, env)
			if err != nil {
				errs = append(errs, err)
				break // one refusal per job: the clones share the file name pattern
			}
			need[rdir] += grow
			if j.GetFilename() != "" {
				break // every clone uses the one named file
			}
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
	return errors.Join(errs...)
}

// jobFile checks clone n's file and returns how many bytes its layout adds.
func jobFile(j *fiov1.Job, n int, dir string, env workload.Env) (int64, error) {
	name := j.GetFilename()
	if name == "" {
		name = fmt.Sprintf("%s.%d.0", j.GetName(), n)
	}
	if !filepath.IsAbs(name) {
		name = dir + "/" + name // not Join: the guard must see any ".." as written
	}
	path, err := env.Path(name)
	if err != nil {
		return 0, fmt.Errorf("job %s: filename=: %w", j.GetName(), err)
	}
	want := int64(j.GetOffset() + j.GetSize())
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return 0, nil // a device: nothing is laid out
	case err == nil:
		return max(want-st.Size(), 0), nil
	default:
		return want, nil
	}
}
