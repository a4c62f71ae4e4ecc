package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Several files per job, as fio 3.33 has them: nrfiles= generated names
// (filename_format=), or filename=a:b:c; the job's size divided over the
// files as setup_files divides it, or filesize= (a range drawn per file
// from fio's own generator and seed); each I/O's file chosen as
// get_next_file chooses it (file_service_type=).

// setFilename reads filename=: names split at unescaped colons ("\:" is a
// colon in a name), empty names skipped, as fio's get_next_str. As in
// fio's str_filename_cb, the names given decide the number of files.
func setFilename(j *fiov1.Job, v string) error {
	var names []string
	for _, n := range splitFilenames(strings.TrimSpace(v)) {
		if n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("%q names no file", v)
	}
	for _, n := range names {
		if strings.IndexByte(n, 0) >= 0 {
			return fmt.Errorf("a file name must not contain NUL")
		}
	}
	if len(names) > maxFiles {
		return fmt.Errorf("%d files: at most %d per job", len(names), maxFiles)
	}
	j.Filename = names[0]
	j.Filenames = nil
	if len(names) > 1 {
		j.Filenames = names
	}
	j.Nrfiles = uint32(len(names))
	return nil
}

// setNrfiles reads nrfiles=. With filename= given, fio keeps no more
// files than it names (fixup_options caps nr_files at the files added).
// fio's --parse-only takes any count; 0 (fio then runs the job without a
// file, doing nothing) and more than maxFiles are refused when run.
func setNrfiles(j *fiov1.Job, v string) error {
	n, err := parseUint(v, 0, math.MaxUint32)
	if err != nil {
		return err
	}
	switch {
	case n == 0:
		return runRefusal("nrfiles=0: fio runs the job with no file and does no I/O; give 1 or more")
	case n > maxFiles:
		return runRefusal(fmt.Sprintf("%d files: at most %d files per job (each an open file)", n, maxFiles))
	}
	if j.Filename != "" {
		named := max(len(j.Filenames), 1)
		n = min(n, uint64(named))
		if len(j.Filenames) > 1 {
			j.Filenames = j.Filenames[:n]
			if n == 1 {
				j.Filenames = nil
			}
		}
	}
	j.Nrfiles = uint32(n)
	return nil
}

// setFilesize reads filesize=N or a range low-high (low:high), fio's
// FIO_OPT_RANGE: each file gets a size drawn between the two.
func setFilesize(j *fiov1.Job, v string) error {
	v = strings.TrimSpace(v)
	if strings.HasSuffix(v, "%") {
		return fmt.Errorf("%q: a percentage is not accepted here; give bytes (e.g. 1G)", v)
	}
	lo, hi, isRange := strings.Cut(v, "-")
	if !isRange {
		lo, hi, isRange = strings.Cut(v, ":")
	}
	if !isRange {
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		j.Filesize, j.FilesizeMax = n, 0
		return nil
	}
	a, err := parseSize(rangeBound(lo))
	if err != nil {
		return err
	}
	z, err := parseSize(rangeBound(hi))
	if err != nil {
		return err
	}
	j.Filesize, j.FilesizeMax = min(a, z), max(a, z)
	if j.FilesizeMax == j.Filesize {
		j.FilesizeMax = 0
	}
	return nil
}

var fileServices = map[string]fiov1.FileService{
	"roundrobin": fiov1.FileService_FILE_SERVICE_ROUNDROBIN,
	"random":     fiov1.FileService_FILE_SERVICE_RANDOM,
	"sequential": fiov1.FileService_FILE_SERVICE_SEQUENTIAL,
	"zipf":       fiov1.FileService_FILE_SERVICE_ZIPF,
	"pareto":     fiov1.FileService_FILE_SERVICE_PARETO,
	"normal":     fiov1.FileService_FILE_SERVICE_GAUSS,
	"gauss":      fiov1.FileService_FILE_SERVICE_GAUSS,
}

// nonUniform reports fio's __FIO_FSERVICE_NONUNIFORM: a file is never
// done, its offsets start over when its region is issued.
func nonUniform(fs fiov1.FileService) bool {
	return fs == fiov1.FileService_FILE_SERVICE_ZIPF || fs == fiov1.FileService_FILE_SERVICE_PARETO || fs == fiov1.FileService_FILE_SERVICE_GAUSS
}

// setFileService reads file_service_type=TYPE[:N]: N I/Os to a file
// before the next is chosen (fio's file_service_nr, read with atoi); for
// zipf, pareto and normal TYPE:VALUE[:CENTER], checked as fio's str_fst_cb.
func setFileService(j *fiov1.Job, v string) error {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(v), ":")
	fs, ok := fileServices[name]
	if !ok {
		return fmt.Errorf("%q: want random, roundrobin, sequential, zipf, pareto, normal or gauss", v)
	}
	if nonUniform(fs) {
		return setFileDist(j, fs, arg, hasArg)
	}
	nr := uint64(1)
	if hasArg {
		nr = uint64(atoi(arg))
	}
	if nr > math.MaxUint32 {
		return fmt.Errorf("%q: at most %d I/Os per file", v, uint32(math.MaxUint32))
	}
	if fs == fiov1.FileService_FILE_SERVICE_ROUNDROBIN && nr == 1 {
		fs, nr = fiov1.FileService_FILE_SERVICE_UNSPECIFIED, 0 // fio's default
	}
	j.FileService, j.FileServiceNr = fs, uint32(nr)
	j.FileServiceParam, j.FileServiceCenter, j.FileServiceCentered = 0, 0, false
	return nil
}

// setFileDist reads the VALUE[:CENTER] of a zipf, pareto or normal file
// choice, with fio's defaults (zipf 1.1, pareto 0.2, normal 0) and bounds.
func setFileDist(j *fiov1.Job, fs fiov1.FileService, arg string, hasArg bool) error {
	val := map[fiov1.FileService]float64{fiov1.FileService_FILE_SERVICE_ZIPF: 1.1, fiov1.FileService_FILE_SERVICE_PARETO: 0.2}[fs]
	center, centered := 0.0, false
	if hasArg {
		vs, cs, hasC := strings.Cut(arg, ":")
		var err error
		if val, err = strconv.ParseFloat(strings.TrimSpace(vs), 64); err != nil {
			return fmt.Errorf("%q: file service type random postfix parsing failed (fio)", arg)
		}
		if hasC {
			if center, err = strconv.ParseFloat(strings.TrimSpace(cs), 64); err != nil {
				return fmt.Errorf("%q: file service type random postfix parsing failed (fio)", arg)
			}
			if center < 0 || center > 1 {
				return fmt.Errorf("center %g: distribution center out of range (0 <= center <= 1.0)", center)
			}
			centered = true
		}
	}
	switch {
	case fs == fiov1.FileService_FILE_SERVICE_ZIPF && val == 1:
		return fmt.Errorf("zipf theta must be different than 1.0")
	case fs == fiov1.FileService_FILE_SERVICE_PARETO && (val <= 0 || val >= 1):
		return fmt.Errorf("pareto input %g out of range (0 < input < 1.0)", val)
	case fs == fiov1.FileService_FILE_SERVICE_GAUSS && (val < 0 || val >= 100):
		return fmt.Errorf("normal deviation %g out of range (0 <= input < 100.0)", val)
	case math.IsNaN(val) || math.IsInf(val, 0):
		return fmt.Errorf("%g: want a finite number", val)
	}
	j.FileService, j.FileServiceNr = fs, 1
	j.FileServiceParam, j.FileServiceCenter, j.FileServiceCentered = val, center, centered
	return nil
}

// atoi is C's: the leading digits, 0 without any.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 10 {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

// setFilenameFormat reads filename_format=.
func setFilenameFormat(j *fiov1.Job, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("a file name must not contain NUL")
	}
	if v == "$jobname.$jobnum.$filenum" {
		v = "" // fio's default
	}
	j.FilenameFormat = v
	return nil
}

// setUnlinkEachLoop reads unlink_each_loop=: between loops the files are
// closed and removed, and a job that writes makes them afresh (fio
// reopens them with O_CREAT).
func setUnlinkEachLoop(j *fiov1.Job, v string) error {
	b, err := parseBool(v)
	if err != nil {
		return err
	}
	j.UnlinkEachLoop = b
	return nil
}

// fileCount is how many files each clone of j uses.
func fileCount(j *fiov1.Job) int {
	if n := len(j.GetFilenames()); n > 1 {
		return n
	}
	if j.GetFilename() != "" {
		return 1
	}
	return int(max(j.GetNrfiles(), 1))
}

// multiFile reports whether j's clones use several files.
func multiFile(j *fiov1.Job) bool { return fileCount(j) > 1 }

// fileName is file i of clone num, as written (before directory=):
// filename='s names, or fio's make_filename of filename_format=.
func fileName(j *fiov1.Job, num, i int) string {
	if names := j.GetFilenames(); len(names) > 1 {
		return names[i]
	}
	if f := j.GetFilename(); f != "" {
		return f
	}
	format := j.GetFilenameFormat()
	if format == "" {
		return fmt.Sprintf("%s.%d.%d", j.GetName(), num, i)
	}
	// fio substitutes keyword by keyword, each everywhere, matching
	// case-insensitively; $clientuid is empty outside client/server runs.
	for _, kw := range [...]struct{ key, val string }{
		{"$jobname", j.GetName()}, {"$jobnum", strconv.Itoa(num)}, {"$filenum", strconv.Itoa(i)}, {"$clientuid", ""},
	} {
		format = replaceFold(format, kw.key, kw.val)
	}
	return format
}

// replaceFold replaces every case-insensitive occurrence of key (ASCII).
func replaceFold(s, key, val string) string {
	var b strings.Builder
	for {
		i := strings.Index(strings.ToLower(s), key)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(val)
		s = s[i+len(key):]
	}
}

// refuseFileCombos refuses, when the job runs, what is built for one file
// per job only: the I/O these features do is tied to one descriptor and
// one region.
func refuseFileCombos(j *fiov1.Job) {
	if j.UnlinkEachLoop && (j.Ioengine == fiov1.IOEngine_IO_ENGINE_MMAP || j.ReadIolog != "") {
		refuse(j, "unlink_each_loop", "1", j.Origin, "unlink_each_loop with ioengine=mmap or read_iolog= is not built")
	}
	if !multiFile(j) {
		return
	}
	why := ""
	switch {
	case j.Verify != fiov1.Verify_VERIFY_NONE && j.Verify != fiov1.Verify_VERIFY_UNSPECIFIED:
		why = "verify= with several files per job is not built yet"
	case j.Ioengine == fiov1.IOEngine_IO_ENGINE_MMAP:
		why = "ioengine=mmap with several files per job is not built yet"
	case j.ReadIolog != "":
		why = "read_iolog= replays the log's files; with nrfiles/filename lists it is not built yet"
	case j.ZoneMode == zoneStrided:
		why = "zonemode=strided with several files per job is not built yet"
	case j.Rw == fiov1.ReadWrite_READ_WRITE_TRIMWRITE || j.Rw == fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		why = "trimwrite with several files per job is not built yet"
	case j.OffsetPercent > 0:
		why = "offset=N% with several files per job is not built yet"
	}
	if why != "" {
		refuse(j, "nrfiles", strconv.Itoa(fileCount(j)), j.Origin, why)
	}
}

// fileRegion is one file's part of a clone's I/O: where its region
// starts (offset=) and how many bytes it has (fio's file_offset and
// io_size).
type fileRegion struct{ offset, size uint64 }

// fileRegions divides a clone's I/O over its files as fio 3.33's
// setup_files: without filesize=, size / nrfiles each, the first files a
// block larger while what is left over holds whole blocks; with filesize=,
// a file outside the range gets its size (a range: drawn with fio's
// file_size_state generator, next from the caller) less offset=, one in
// it keeps its own; with neither size= nor filesize=, each file's own
// size. real are the files' sizes now (-1: no file). It returns the
// regions and the job's bytes per loop before io_size= (fio's o->size
// after setup_files).
func fileRegions(j *fiov1.Job, offset uint64, real []int64, next func() uint32) ([]fileRegion, uint64, error) {
	n := uint64(len(real))
	bs := max(minBlock(j), 1)
	size := j.Size
	ranged := j.Filesize > 0
	if size == 0 && !ranged && j.SizePercent == 0 {
		// fio's setup_files: the files' sizes are the job's, and none
		// there (an absent file counts 0) is fio's "you need to specify"
		var have int64
		for _, r := range real {
			have += max(r, 0)
		}
		if have == 0 {
			return nil, 0, sizeNeeded(j, "its files", "do not exist or are empty")
		}
	}
	var fs, extra uint64
	if !ranged {
		fs = size / n
		if all := fs * n; all < size {
			extra = (size - all) / bs
		}
	}
	out := make([]fileRegion, n)
	var total uint64
	for i, r := range real {
		var io uint64
		switch {
		case j.SizePercent > 0 && !ranged:
			// size=N%: that share of each file (fio's size_percent)
			if r < 0 || uint64(r) <= offset {
				return nil, 0, fmt.Errorf("job %s: size=%d%% needs file %d to exist with data past offset=%d", j.Name, j.SizePercent, i, offset)
			}
			io = uint64(r) - offset
			if j.SizePercent != 100 {
				io = min(uint64(r)*uint64(j.SizePercent)/100, io)
				io -= io % bs
			}
		case !ranged:
			io = fs
			if extra > 0 {
				extra--
				io += bs
			}
			if io == 0 {
				if r < 0 && j.Size == 0 {
					return nil, 0, fmt.Errorf("job %s: %w: file %d does not exist and there is no size= to lay it out with (fio 3.33 runs the job on the others and fails opening it: err=2, No such file or directory)", j.Name, ErrInvalidValue, i)
				}
				if r < 0 || uint64(r) < offset {
					return nil, 0, fmt.Errorf("job %s: size= not given and file %d has no data past offset=%d", j.Name, i, offset)
				}
				io = uint64(r) - offset
			}
		case r < 0 || uint64(r) < j.Filesize || (j.FilesizeMax > 0 && uint64(r) > j.FilesizeMax) || (j.FilesizeMax == 0 && uint64(r) > j.Filesize):
			if offset > j.Filesize {
				return nil, 0, fmt.Errorf("job %s: offset=%d is past filesize=%d", j.Name, offset, j.Filesize)
			}
			want := j.Filesize
			if j.FilesizeMax > 0 {
				want = randFileSize(j, bs, next())
			}
			io = want - min(offset, want)
		default:
			io = uint64(r) - min(offset, uint64(r))
		}
		out[i] = fileRegion{offset: offset, size: io}
		total += io
	}
	if size == 0 || size > total {
		size = total
	}
	if size < bs {
		return nil, 0, fmt.Errorf("job %s: %w: blocksize is larger than data set range (fio)", j.Name, ErrInvalidValue)
	}
	return out, size, nil
}

// randFileSize is fio's get_rand_file_size: a size in the filesize range
// from the generator's 32-bit draw r, rounded down to rw_min_bs.
func randFileSize(j *fiov1.Job, bs uint64, r uint32) uint64 {
	span := j.FilesizeMax - j.Filesize
	n := uint64(float64(span)*(float64(r)/(1<<32))) + j.Filesize
	return n - n%bs
}

// minBlock is fio's td_min_bs: the smallest block size of any direction.
func minBlock(j *fiov1.Job) uint64 {
	r, w, t := resolveBlocks(j.ReadBs, j.Bs), resolveBlocks(j.WriteBs, j.Bs), resolveBlocks(j.TrimBs, j.Bs)
	return min(r.min, w.min, t.min)
}

// fio's FIO_RAND_FILE_OFF and FIO_RAND_FILE_SIZE_OFF: the file choice's
// and the file sizes' places among a job's seeds.
const (
	fioRandFileOff     = 5
	fioRandFileSizeOff = 7
)
