package fio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/guard"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

func TestFilenameList(t *testing.T) {
	tests := []struct {
		value string
		want  []string // the job's files
		err   string
	}{
		{"a", []string{"a"}, ""},
		{"a:b:c", []string{"a", "b", "c"}, ""},
		{`a\:b:c`, []string{"a:b", "c"}, ""},
		// fio's get_next_str skips empty names
		{"::a::b:", []string{"a", "b"}, ""},
		{`/dev/x\:1`, []string{"/dev/x:1"}, ""},
		{":", nil, "names no file"},
		{"a:b\x00c", nil, "NUL"},
	}
	for _, tt := range tests {
		j := &fiov1.Job{Name: "j"}
		err := setFilename(j, tt.value)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("filename=%q: %v; want an error saying %q", tt.value, err, tt.err)
			}
			continue
		}
		var got []string
		for i := range fileCount(j) {
			got = append(got, fileName(j, 0, i))
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("filename=%q: files %q, %v; want %q", tt.value, got, err, tt.want)
		}
	}
}

func TestNrfilesAfterFilename(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--nrfiles=4"}, 4},
		{[]string{"--filename=a:b:c", "--nrfiles=2"}, 2}, // fio caps nr_files at the files named
		{[]string{"--filename=a:b", "--nrfiles=8"}, 2},
		{[]string{"--nrfiles=8", "--filename=a:b"}, 2}, // filename= resets the count
		{[]string{"--filename=a", "--nrfiles=3"}, 1},
	}
	for _, tt := range tests {
		spec, err := ParseArgs(append([]string{"--name=j", "--size=1m"}, tt.args...))
		if err != nil {
			t.Fatal(err)
		}
		if got := fileCount(spec.Jobs[0]); got != tt.want {
			t.Errorf("%q: %d files; want %d", tt.args, got, tt.want)
		}
	}
}

func TestFilenameFormat(t *testing.T) {
	tests := []struct {
		format   string
		num, i   int
		wantName string
	}{
		{"", 1, 2, "job.1.2"},
		{"$jobname.$jobnum.$filenum", 1, 2, "job.1.2"},
		{"f-$filenum", 0, 3, "f-3"},
		{"$JOBNAME/$jobnum/$FileNum.dat", 2, 0, "job/2/0.dat"},
		{"$filenum-$filenum", 0, 7, "7-7"},
		{"x$clientuid.y", 0, 0, "x.y"},
	}
	for _, tt := range tests {
		j := &fiov1.Job{Name: "job", Nrfiles: 4}
		if err := setFilenameFormat(j, tt.format); err != nil {
			t.Fatal(err)
		}
		if got := fileName(j, tt.num, tt.i); got != tt.wantName {
			t.Errorf("filename_format=%q clone %d file %d = %q; want %q", tt.format, tt.num, tt.i, got, tt.wantName)
		}
	}
}

func TestFileService(t *testing.T) {
	tests := []struct {
		value string
		mode  fiov1.FileService
		nr    uint32
		err   string
	}{
		{"roundrobin", fiov1.FileService_FILE_SERVICE_UNSPECIFIED, 0, ""},
		{"roundrobin:4", fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 4, ""},
		{"random", fiov1.FileService_FILE_SERVICE_RANDOM, 1, ""},
		{"random:16", fiov1.FileService_FILE_SERVICE_RANDOM, 16, ""},
		{"sequential", fiov1.FileService_FILE_SERVICE_SEQUENTIAL, 1, ""},
		{"roundrobin:x", fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 0, ""}, // fio's atoi
		{"lottery", 0, 0, "want random, roundrobin"},
		{"zipf:1.2", fiov1.FileService_FILE_SERVICE_ZIPF, 1, ""},
		{"normal", fiov1.FileService_FILE_SERVICE_GAUSS, 1, ""},
		{"pareto:0.3:0.5", fiov1.FileService_FILE_SERVICE_PARETO, 1, ""},
		{"gauss:100", 0, 0, "normal deviation 100 out of range"},
		{"zipf:x", 0, 0, "postfix parsing failed"},
	}
	for _, tt := range tests {
		j := &fiov1.Job{}
		err := setFileService(j, tt.value)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("file_service_type=%s: %v; want %q", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || j.FileService != tt.mode || j.FileServiceNr != tt.nr {
			t.Errorf("file_service_type=%s: %v/%d, %v; want %v/%d", tt.value, j.FileService, j.FileServiceNr, err, tt.mode, tt.nr)
		}
	}
}

func TestFileRegions(t *testing.T) {
	tests := []struct {
		name      string
		job       *fiov1.Job
		real      []int64
		want      []uint64
		wantLimit uint64
	}{
		{"even", &fiov1.Job{Size: 3 << 20, Bs: 4096}, []int64{-1, -1, -1}, []uint64{1 << 20, 1 << 20, 1 << 20}, 3 << 20},
		{"remainder", &fiov1.Job{Size: 1000 << 10, Bs: 65536}, []int64{-1, -1, -1}, []uint64{341333, 341333, 341333}, 1023999}, // size= lowered to what the files hold
		// what is left over holds whole blocks: the first files a block more
		{"extra blocks", &fiov1.Job{Size: 10, Bs: 1}, []int64{-1, -1, -1, -1}, []uint64{3, 3, 2, 2}, 10},
		{"filesize", &fiov1.Job{Size: 8 << 20, Filesize: 1 << 20, Bs: 4096}, []int64{-1, 2 << 20, 1 << 20}, []uint64{1 << 20, 1 << 20, 1 << 20}, 3 << 20},
		{"own sizes", &fiov1.Job{Bs: 4096}, []int64{8192, 16384}, []uint64{8192, 16384}, 24576},
		{"offset", &fiov1.Job{Filesize: 1 << 20, Offset: 4096, Bs: 4096}, []int64{-1, -1}, []uint64{1<<20 - 4096, 1<<20 - 4096}, 2<<20 - 8192},
	}
	for _, tt := range tests {
		tt.job.Name = "j"
		got, limit, err := fileRegions(tt.job, tt.job.Offset, tt.real, func() uint32 { return 0 })
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var sizes []uint64
		for _, r := range got {
			sizes = append(sizes, r.size)
		}
		if !reflect.DeepEqual(sizes, tt.want) || limit != tt.wantLimit {
			t.Errorf("%s: sizes %v, limit %d; want %v, %d", tt.name, sizes, limit, tt.want, tt.wantLimit)
		}
	}
	if _, _, err := fileRegions(&fiov1.Job{Name: "j", Bs: 4096}, 0, []int64{-1, -1}, nil); err == nil {
		t.Error("no size and no files: want an error")
	}
}

// TestPickFileIsFios: fio's get_next_file order for each service type,
// files done skipped.
func TestPickFileIsFios(t *testing.T) {
	tests := []struct {
		mode    fiov1.FileService
		nr      uint32
		maxOpen int
		done    []bool
		want    []int // -1: fio's -EBUSY
	}{
		{fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 1, 3, nil, []int{0, 1, 2, 0, 1, 2}},
		{fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 2, 3, nil, []int{0, 0, 1, 1, 2, 2, 0}},
		{fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 1, 3, []bool{false, true, false}, []int{0, 2, 0, 2}},
		{fiov1.FileService_FILE_SERVICE_SEQUENTIAL, 1, 3, nil, []int{0, 0, 0, 0}},
		{fiov1.FileService_FILE_SERVICE_SEQUENTIAL, 1, 3, []bool{true, false, false}, []int{1, 1, 1}},
		// openfiles=1: the turn moves on, the files not open are busy
		{fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 1, 1, nil, []int{0, -1, -1, 0, -1, -1}},
		{fiov1.FileService_FILE_SERVICE_ROUNDROBIN, 1, 2, nil, []int{0, 1, -1, 0, 1, -1}},
	}
	for _, tt := range tests {
		c := &clone{fsv: fileService{mode: tt.mode, nr: tt.nr, cur: -1, maxOpen: tt.maxOpen}}
		for i := range 3 {
			c.files = append(c.files, &cfile{done: i < len(tt.done) && tt.done[i]})
		}
		var got []int
		for range tt.want {
			got = append(got, c.pickFile())
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v:%d done %v: %v; want %v", tt.mode, tt.nr, tt.done, got, tt.want)
		}
	}
}

// TestPickFileAllocatesNothing: choosing the file of an I/O is on the hot
// path.
func TestPickFileAllocatesNothing(t *testing.T) {
	c := &clone{fsv: fileService{mode: fiov1.FileService_FILE_SERVICE_RANDOM, nr: 1, cur: -1, rnd: newTaus88(1), maxOpen: 4}}
	for range 4 {
		c.files = append(c.files, &cfile{gen: &generator{}})
	}
	if n := testing.AllocsPerRun(1000, func() { c.use(c.pickFile()) }); n != 0 {
		t.Errorf("pickFile+use: %v allocations; want 0", n)
	}
}

// ioEntry is one I/O of a write_iolog, its file by base name.
type ioEntry struct {
	file, op  string
	off, size string
}

// readIOLog reads a fio version 3 I/O log's file actions and I/Os (syncs
// without their offset: fio's libaio gives a sync the offset its io_u had
// before).
func readIOLog(t *testing.T, path string) []ioEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ioEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) == 3 && (fl[2] == "add" || fl[2] == "open" || fl[2] == "close") {
			out = append(out, ioEntry{file: filepath.Base(fl[1]), op: fl[2]})
			continue
		}
		if len(fl) < 5 || (fl[2] != "read" && fl[2] != "write" && fl[2] != "sync" && fl[2] != "datasync") {
			continue
		}
		e := ioEntry{file: filepath.Base(fl[1]), op: fl[2], off: fl[3], size: fl[4]}
		if e.op == "sync" || e.op == "datasync" {
			e.off = ""
		}
		out = append(out, e)
	}
	return out
}

// perFile counts a log's I/Os and bytes by file and op.
func perFile(log []ioEntry) map[string][2]int64 {
	m := map[string][2]int64{}
	for _, e := range log {
		if e.size == "" && e.op != "sync" && e.op != "datasync" {
			continue // a file action
		}
		k := e.file + " " + e.op
		v := m[k]
		var n int64
		fmt.Sscan(e.size, &n)
		v[0]++
		v[1] += n
		m[k] = v
	}
	return m
}

// dirFiles lists a directory's files and sizes.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d", e.Name(), fi.Size()))
	}
	sort.Strings(out)
	return out
}

// jsonTotals are a fio JSON report's first job's bytes and I/Os per
// direction and its syncs.
func jsonTotals(t *testing.T, out []byte) string {
	t.Helper()
	var r struct {
		Jobs []map[string]json.RawMessage `json:"jobs"`
	}
	if i := bytes.Index(out, []byte("\n{")); i >= 0 && !bytes.HasPrefix(out, []byte("{")) {
		out = out[i+1:] // fio's normal lines before the JSON
	}
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&r); err != nil || len(r.Jobs) == 0 {
		t.Fatalf("JSON report: %v\n%s", err, out)
	}
	var s []string
	for _, d := range []string{"read", "write", "sync"} {
		var v struct {
			IOBytes  int64 `json:"io_bytes"`
			TotalIOs int64 `json:"total_ios"`
		}
		_ = json.Unmarshal(r.Jobs[0][d], &v)
		s = append(s, fmt.Sprintf("%s %d/%d", d, v.IOBytes, v.TotalIOs))
	}
	return strings.Join(s, ", ")
}

// TestSeveralFilesMatchFio runs the same multi-file jobs in fio 3.33 and
// here, each in a directory of its own, and compares what each did per
// file (fio's write_iolog, written by both: every I/O's file, op, offset
// and length, in order), the files left on disk, the JSON totals and
// fio's "Laying out IO files" line.
func TestSeveralFilesMatchFio(t *testing.T) {
	fio := fioPath(t)
	tests := []struct {
		name string
		args []string
		// order: the I/Os must come in fio's order (one clone, offsets
		// from no random generator); else per file counts and bytes.
		order bool
		// existing are the sizes of files mf.0.N made before the run
		existing []int
	}{
		{"roundrobin", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=3"}, true, nil},
		{"roundrobin:4", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=3", "--file_service_type=roundrobin:4"}, true, nil},
		{"sequential", []string{"--rw=read", "--size=2m", "--bs=16k", "--nrfiles=4", "--file_service_type=sequential"}, true, nil},
		{"random:3 fsync", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=3", "--file_service_type=random:3", "--fsync=2"}, true, nil},
		{"uneven size", []string{"--rw=write", "--size=1000k", "--bs=64k", "--nrfiles=3"}, true, nil},
		{"filesize range", []string{"--rw=write", "--nrfiles=4", "--filesize=64k-256k", "--bs=4k"}, true, nil},
		{"colon list", []string{"--rw=write", "--size=1m", "--bs=4k", `--filename=a:b\:c:d`}, true, nil},
		{"create_on_open", []string{"--rw=write", "--size=1m", "--bs=4k", "--nrfiles=2", "--create_on_open=1"}, true, nil},
		{"unlink", []string{"--rw=write", "--size=1m", "--bs=4k", "--nrfiles=3", "--unlink=1"}, true, nil},
		{"mix loops", []string{"--rw=rw", "--size=2m", "--bs=4k", "--nrfiles=2", "--file_service_type=sequential", "--loops=2"}, true, nil},
		{"mix random loops", []string{"--rw=rw", "--size=2m", "--bs=4k", "--nrfiles=3", "--loops=3", "--file_service_type=random"}, true, nil},
		{"io_size passes", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=3", "--io_size=5m"}, true, nil},
		{"libaio", []string{"--rw=write", "--size=2m", "--bs=4k", "--nrfiles=2", "--ioengine=libaio", "--iodepth=4", "--fsync=3"}, true, nil},
		{"zipf", []string{"--rw=write", "--size=4m", "--bs=4k", "--nrfiles=8", "--file_service_type=zipf"}, true, nil},
		{"pareto", []string{"--rw=write", "--size=4m", "--bs=4k", "--nrfiles=8", "--file_service_type=pareto:0.3"}, true, nil},
		{"normal", []string{"--rw=write", "--size=4m", "--bs=4k", "--nrfiles=8", "--file_service_type=normal:20"}, true, nil},
		{"zipf centered", []string{"--rw=write", "--size=4m", "--bs=4k", "--nrfiles=8", "--file_service_type=zipf:1.4:0.3"}, true, nil},
		{"gauss mix loops", []string{"--rw=rw", "--size=4m", "--bs=4k", "--nrfiles=6", "--file_service_type=gauss:5:0.2", "--loops=2"}, true, nil},
		{"openfiles=1", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=3", "--openfiles=1"}, true, nil},
		{"openfiles random", []string{"--rw=write", "--size=3m", "--bs=64k", "--nrfiles=4", "--openfiles=2", "--file_service_type=random"}, true, nil},
		{"openfiles mix loops", []string{"--rw=rw", "--size=3m", "--bs=4k", "--nrfiles=5", "--openfiles=3", "--file_service_type=roundrobin:3", "--loops=2"}, true, nil},
		{"openfiles libaio", []string{"--rw=write", "--size=2m", "--bs=4k", "--nrfiles=4", "--openfiles=2", "--ioengine=libaio", "--iodepth=8"}, true, nil},
		{"zipf create_on_open", []string{"--rw=write", "--size=4m", "--bs=4k", "--nrfiles=8", "--file_service_type=zipf", "--create_on_open=1"}, true, nil},
		{"unlink_each_loop", []string{"--rw=write", "--size=1m", "--bs=64k", "--nrfiles=3", "--loops=3", "--unlink_each_loop=1"}, true, nil},
		{"unlink_each_loop one file", []string{"--rw=write", "--size=1m", "--bs=64k", "--loops=3", "--unlink_each_loop=1"}, true, nil},
		{"unlink_each_loop libaio", []string{"--rw=write", "--size=1m", "--bs=4k", "--nrfiles=2", "--loops=2", "--unlink_each_loop=1", "--ioengine=libaio", "--iodepth=8"}, true, nil},
		{"one file filesize offset", []string{"--rw=write", "--filesize=1m", "--offset=256k", "--bs=64k"}, true, nil},
		{"one file filesize range", []string{"--rw=write", "--filesize=64k-1m", "--bs=4k"}, true, nil},
		{"filesize over size", []string{"--rw=write", "--filesize=1m", "--size=512k", "--bs=64k"}, true, nil},
		{"filesize over size, 2 files", []string{"--rw=write", "--filesize=1m", "--size=512k", "--bs=64k", "--nrfiles=2"}, true, nil},
		{"size=50% of existing files", []string{"--rw=write", "--bs=4k", "--nrfiles=3", "--size=50%", "--offset=8k"}, true, []int{1000000, 1300000, 1600000}},
		{"size=100% of existing files", []string{"--rw=write", "--bs=4k", "--nrfiles=3", "--size=100%"}, true, []int{1000000, 1300000, 1600000}},
		{"thinktime", []string{"--rw=write", "--size=2m", "--bs=4k", "--nrfiles=3", "--thinktime=100", "--thinktime_blocks=7"}, true, nil},
		{"fdatasync and fsync", []string{"--rw=write", "--size=256k", "--bs=4k", "--fdatasync=5", "--fsync=3", "--nrfiles=2"}, true, nil},
		{"holes", []string{"--rw=write:64k", "--size=2m", "--bs=64k", "--nrfiles=2"}, true, nil},
		{"number_ios", []string{"--rw=read", "--size=2m", "--bs=64k", "--nrfiles=2", "--number_ios=10"}, true, nil},
		{"randwrite gauss", []string{"--rw=randwrite", "--size=4m", "--bs=4k", "--nrfiles=5", "--file_service_type=gauss:10:0.7"}, false, nil},
		{"randwrite random", []string{"--rw=randwrite", "--size=3m", "--bs=4k", "--nrfiles=3", "--file_service_type=random"}, false, nil},
		{"format numjobs", []string{"--rw=read", "--size=2m", "--bs=16k", "--nrfiles=2", "--numjobs=2", "--filename_format=$jobname-$jobnum-f$filenum.dat"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			run := func(who string) (log []ioEntry, files []string, totals, laying string) {
				dir := filepath.Join(root, who)
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for i, n := range tt.existing {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("mf.0.%d", i)), make([]byte, n), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				iolog := filepath.Join(root, who+".iolog")
				args := append([]string{"--name=mf", "--directory=" + dir, "--write_iolog=" + iolog, "--output-format=normal,json"}, tt.args...)
				var out []byte
				if who == "fio" {
					cmd := exec.Command(fio, args...)
					cmd.Dir = dir
					var err error
					if out, err = cmd.Output(); err != nil {
						t.Fatalf("fio %q: %v", args, err)
					}
				} else {
					var b, e bytes.Buffer
					if err := RunCommand(context.Background(), args, &b, &e, "t"); err != nil {
						t.Fatalf("writepath fio %q: %v\n%s", args, err, e.String())
					}
					out = b.Bytes()
				}
				laying = afterStarting(string(out))
				return readIOLog(t, iolog), dirFiles(t, dir), jsonTotals(t, out), laying
			}
			wLog, wFiles, wTot, wLay := run("writepath")
			fLog, fFiles, fTot, fLay := run("fio")
			t.Logf("files: %v; JSON: %s; %s", wFiles, wTot, wLay)
			if tt.order && !reflect.DeepEqual(wLog, fLog) {
				i := 0
				for i < min(len(wLog), len(fLog)) && wLog[i] == fLog[i] {
					i++
				}
				t.Errorf("I/O %d of %d/%d differs: ours %v, fio's %v", i, len(wLog), len(fLog), at(wLog, i), at(fLog, i))
			}
			// fio's clones append to one log unsynchronised: lines of two
			// clones may tear, so a numjobs job is compared by its files
			// and totals
			shared := strings.Contains(strings.Join(tt.args, " "), "--numjobs=")
			if w, f := perFile(wLog), perFile(fLog); !shared && !reflect.DeepEqual(w, f) {
				t.Errorf("per file I/Os and bytes: ours %v\nfio's %v", w, f)
			}
			if !reflect.DeepEqual(wFiles, fFiles) {
				t.Errorf("files on disk: ours %v, fio's %v", wFiles, fFiles)
			}
			if wTot != fTot {
				t.Errorf("JSON totals: ours %s, fio's %s", wTot, fTot)
			}
			if wLay != fLay {
				t.Errorf("layout line: ours %q, fio's %q", wLay, fLay)
			}
		})
	}
}

// afterStarting is what a normal report prints between "Starting N
// process(es)" and the report of the jobs: fio's layout lines.
func afterStarting(out string) string {
	var b []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Starting "):
			in = true
		case !in:
		case l == "" || strings.HasPrefix(l, "{") || strings.Contains(l, "(groupid="):
			return strings.Join(b, "\n")
		default:
			b = append(b, l)
		}
	}
	return strings.Join(b, "\n")
}

func at(log []ioEntry, i int) any {
	if i < len(log) {
		return log[i]
	}
	return "none"
}

// TestSeveralFilesDoNotAllocate: choosing each I/O's file (round robin,
// random, zipf) and the passes of loops= allocate nothing per I/O.
func TestSeveralFilesDoNotAllocate(t *testing.T) {
	for _, tt := range []struct{ engine, service string }{
		{"psync", "roundrobin"}, {"libaio", "random:2"}, {"io_uring", "zipf"}, {"psync", "sequential"},
	} {
		base := []string{"--name=a", "--rw=randwrite", "--direct=1", "--fsync=4", "--iodepth=8", "--ioengine=" + tt.engine,
			"--nrfiles=4", "--file_service_type=" + tt.service, "--loops=2"}
		small := mallocsForRun(t, append(base, "--size=256k")...)
		large := mallocsForRun(t, append(base, "--size=1m")...)
		t.Logf("%s %s: mallocs %d (128 I/Os) vs %d (512 I/Os)", tt.engine, tt.service, small, large)
		if large > small+16 {
			t.Errorf("%s %s: 128 I/Os allocate %d times, 512 I/Os %d; want no per-I/O allocation", tt.engine, tt.service, small, large)
		}
	}
}

// TestSeveralFilesConfined: every file of a job passes the worker's guard
// where it is used, as a job's one file does: a list or a name format
// reaching out of the data dir (by "..", an absolute name or a symlink)
// is refused before anything is laid out, naming the file, and the run
// creates nothing outside.
func TestSeveralFilesConfined(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		bad  string
	}{
		{"dotdot in list", []string{"--filename=ok1:../escape:ok2"}, "../escape"},
		{"absolute in list", []string{"--filename=ok1:" + filepath.Join(outside, "abs")}, filepath.Join(outside, "abs")},
		{"symlink in list", []string{"--filename=ok1:link/f"}, "link/f"},
		{"format dotdot", []string{"--nrfiles=2", "--filename_format=../$jobname.$filenum"}, "../j.0"},
		{"directory symlink", []string{"--nrfiles=3", "--directory=link"}, "link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := ParseArgs(append([]string{"--name=j", "--rw=write", "--size=64k", "--bs=4k"}, tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewFromSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			g, err := guard.New(guard.Config{DataDir: data})
			if err != nil {
				t.Fatal(err)
			}
			env := workload.Env{DataDir: data, Guard: g}
			if err := w.Check(env); err == nil || !errors.Is(err, guard.ErrOutside) || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("Check = %v; want %s refused as outside", err, tt.bad)
			}
			rec := workload.NewRecorder(time.Now())
			if err := w.Run(context.Background(), PhaseRun, env, rec); err == nil {
				t.Error("Run succeeded")
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 0 {
				t.Errorf("the run created %v outside the data dir", ents)
			}
			if ents, _ := os.ReadDir(filepath.Dir(data)); len(ents) > 2 {
				t.Logf("beside the data dir: %v", ents)
			}
		})
	}
}

// TestFileLimits: the number of files per job and in all is bounded, with
// the bound in the message.
func TestFileLimits(t *testing.T) {
	if _, err := ParseArgs([]string{"--name=j", "--size=1m", "--nrfiles=65537"}); err == nil || !strings.Contains(err.Error(), "at most 65536 files per job") {
		t.Errorf("nrfiles=65537: %v", err)
	}
	spec, err := ParseArgs([]string{"--name=j", "--ioengine=null", "--size=1g", "--nrfiles=65536", "--numjobs=64"})
	if err == nil {
		_, err = NewFromSpec(spec)
	}
	if err == nil || !strings.Contains(err.Error(), "at most 1048576") {
		t.Errorf("64 clones x 65536 files: %v; want the bound of files in all", err)
	}
}

// TestDirectoryListMatchesFio: directory=d1:d2 gives the clones the
// directories in turn (fio's set_name_idx by clone number), and files
// named by filename= all go to the first; the same files in the same
// places as fio 3.33's.
func TestDirectoryListMatchesFio(t *testing.T) {
	fio := fioPath(t)
	for _, args := range [][]string{
		{"--nrfiles=2", "--numjobs=3", "--directory=d1:d2"},
		{"--directory=d1:d2", "--filename=x:y", "--numjobs=2"},
	} {
		args = append([]string{"--name=j", "--rw=write", "--size=256k", "--bs=64k"}, args...)
		placed := func(who string) []string {
			dir := t.TempDir()
			for _, d := range []string{"d1", "d2"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if who == "fio" {
				cmd := exec.Command(fio, args...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("fio %q: %v\n%s", args, err, out)
				}
			} else {
				t.Chdir(dir)
				var b, e bytes.Buffer
				if err := RunCommand(context.Background(), args, &b, &e, "t"); err != nil {
					t.Fatalf("writepath fio %q: %v\n%s", args, err, e.String())
				}
			}
			var files []string
			for _, d := range []string{".", "d1", "d2"} {
				for _, f := range dirFiles(t, filepath.Join(dir, d)) {
					if !strings.HasPrefix(f, "d1 ") && !strings.HasPrefix(f, "d2 ") {
						files = append(files, d+"/"+f)
					}
				}
			}
			return files
		}
		if w, f := placed("writepath"), placed("fio"); !reflect.DeepEqual(w, f) {
			t.Errorf("%q: files %v; fio's %v", args, w, f)
		}
	}
}

// BenchmarkNextOpFiles is the per-I/O cost of deciding an I/O of a job
// with 8 files (the null engine: no file is opened; no random map, whose
// search is the same with one file or several), by file service, beside
// one file's.
func BenchmarkNextOpFiles(b *testing.B) {
	for _, tt := range []struct{ name, files, service string }{
		{"one file", "1", "roundrobin"}, {"roundrobin", "8", "roundrobin"}, {"random", "8", "random"}, {"zipf", "8", "zipf"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			spec, err := ParseArgs([]string{"--name=a", "--ioengine=null", "--rw=randwrite", "--bs=4k", "--size=64m", "--norandommap",
				"--nrfiles=" + tt.files, "--file_service_type=" + tt.service, "--time_based", "--runtime=1h"})
			if err != nil {
				b.Fatal(err)
			}
			clones, _, err := plan(spec, envFor(b.TempDir()))
			if err != nil {
				b.Fatal(err)
			}
			c := clones[0]
			c.loopsLeft = 1
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if op, _, _ := c.nextOp(); op == opDone {
					b.Fatal("done")
				}
			}
		})
	}
}
