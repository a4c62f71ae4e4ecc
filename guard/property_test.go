package guard

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// tree is a random directory tree with symlinks under a temp root: data
// (the data dir), extra (an --allow-path) and out (not allowed).
type tree struct {
	root, data, extra, out string
	dirs                   []string // every directory made, absolute
}

var names = []string{"a", "b", "c", "d"}

// makeTree builds directories, files and symlinks from rng: relative and
// absolute links, links into and out of the allowed roots, to /proc magic
// links, dangling ones and loops.
func makeTree(t testing.TB, rng *rand.Rand) *tree {
	root, err := os.MkdirTemp("", "wp-guardprop-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	tr := &tree{root: root, data: filepath.Join(root, "data"), extra: filepath.Join(root, "extra"), out: filepath.Join(root, "out")}
	tr.dirs = []string{tr.data, tr.extra, tr.out}
	for _, d := range tr.dirs {
		os.Mkdir(d, 0o755)
	}
	for range 12 {
		parent := tr.dirs[rng.IntN(len(tr.dirs))]
		d := filepath.Join(parent, names[rng.IntN(len(names))])
		if os.Mkdir(d, 0o755) == nil {
			tr.dirs = append(tr.dirs, d)
		}
	}
	for range 8 {
		d := tr.dirs[rng.IntN(len(tr.dirs))]
		os.WriteFile(filepath.Join(d, names[rng.IntN(len(names))]), []byte("x"), 0o644)
	}
	for range 10 {
		d := tr.dirs[rng.IntN(len(tr.dirs))]
		os.Symlink(tr.linkTarget(rng), filepath.Join(d, names[rng.IntN(len(names))]))
	}
	return tr
}

func (tr *tree) linkTarget(rng *rand.Rand) string {
	switch rng.IntN(7) {
	case 0:
		return tr.dirs[rng.IntN(len(tr.dirs))] // absolute, anywhere
	case 1:
		return "/proc/self/cwd"
	case 2:
		return "/proc/self/fd/" + fmt.Sprint(rng.IntN(4))
	case 3:
		return "zz" // dangling
	}
	return tr.randomRel(rng, 4) // relative, may climb out
}

func (tr *tree) randomRel(rng *rand.Rand, n int) string {
	comps := make([]string, 1+rng.IntN(n))
	for i := range comps {
		switch r := rng.IntN(10); {
		case r < 2:
			comps[i] = ".."
		case r == 2:
			comps[i] = "."
		case r == 3:
			comps[i] = "zz"
		default:
			comps[i] = names[rng.IntN(len(names))]
		}
	}
	return strings.Join(comps, "/")
}

// randomInput is a path a job could name: relative to the data dir, or
// absolute from one of the roots, /proc/self/cwd or /.
func (tr *tree) randomInput(rng *rand.Rand) string {
	rel := tr.randomRel(rng, 6)
	switch rng.IntN(6) {
	case 0:
		return filepath.Join(tr.dirs[rng.IntN(len(tr.dirs))]) + "/" + rel
	case 1:
		return "/proc/self/cwd/" + rel
	case 2:
		return tr.root + "/" + rel
	}
	return rel
}

// TestPathAllowedImpliesInside is the guard's property: for random trees
// of directories and symlinks and random input paths, whatever Path
// allows is opened (through the returned beneath.Path) inside an allowed
// root, and it is the very file the kernel finds for the input path.
func TestPathAllowedImpliesInside(t *testing.T) {
	allowed, checked := 0, 0
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 0x9a4d))
		tr := makeTree(t, rng)
		t.Chdir(tr.dirs[rng.IntN(len(tr.dirs))]) // what /proc/self/cwd names
		p, err := New(Config{DataDir: tr.data, AllowPaths: []string{tr.extra}})
		if err != nil {
			t.Fatal(err)
		}
		for range 80 {
			in := tr.randomInput(rng)
			bp, err := p.Path(in)
			if err != nil {
				continue
			}
			allowed++
			if checkOpened(t, tr, in, bp.String(), func() (int, error) { return bp.Open(unix.O_PATH, 0) }) {
				checked++
			}
		}
	}
	t.Logf("%d inputs allowed, %d of them existing and opened", allowed, checked)
	if allowed < 100 || checked < 50 {
		t.Errorf("the random trees exercised too little: %d allowed, %d opened", allowed, checked)
	}
}

// checkOpened opens an allowed path and asserts the property; it reports
// whether the file existed.
func checkOpened(t testing.TB, tr *tree, in, resolved string, open func() (int, error)) bool {
	t.Helper()
	if !insideRoots(tr, resolved) {
		t.Errorf("Path(%q) = %s: outside %s and %s", in, resolved, tr.data, tr.extra)
	}
	fd, err := open()
	if err != nil {
		// A name under a missing directory or under a file, or too long:
		// nothing to open, nothing opened.
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ENAMETOOLONG) {
			t.Errorf("Path(%q) = %s, allowed, but opening it: %v", in, resolved, err)
		}
		return false
	}
	defer unix.Close(fd)
	at, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || !insideRoots(tr, at) {
		t.Errorf("Path(%q) = %s opened %s (%v): outside the allowed roots", in, resolved, at, err)
	}
	var got, want unix.Stat_t
	unix.Fstat(fd, &got)
	full := in
	if !filepath.IsAbs(in) {
		full = tr.data + "/" + in
	}
	// Where the kernel resolves the input itself, it must find the same
	// file. (It may fail where the guard does not: the guard takes a
	// missing component literally, so "missing/.." is the directory
	// itself; that is still inside.)
	if err := unix.Stat(full, &want); err == nil && (got.Ino != want.Ino || got.Dev != want.Dev) {
		t.Errorf("Path(%q) opened inode %d; the kernel finds %d", in, got.Ino, want.Ino)
	}
	return true
}

func insideRoots(tr *tree, p string) bool {
	for _, r := range []string{tr.data, tr.extra} {
		if within(r, p) {
			return true
		}
	}
	return false
}

// FuzzPath fuzzes the input path on one fixed tree (seed 1) with the same
// property.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"a/../..", "a/b/../../c", "/proc/self/cwd/../../x", "../out/a", "d/./c/..", "zz/../a"} {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(1, 0x9a4d))
	tr := makeTree(f, rng)
	p, err := New(Config{DataDir: tr.data, AllowPaths: []string{tr.extra}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, "/proc/") && !strings.HasPrefix(in, "/proc/self/cwd/") {
			t.Skip("other /proc entries depend on the fuzzing process, not on the tree")
		}
		bp, err := p.Path(in)
		if err != nil {
			return
		}
		checkOpened(t, tr, in, bp.String(), func() (int, error) { return bp.Open(unix.O_PATH, 0) })
	})
}
