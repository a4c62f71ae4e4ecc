package fio

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// setting is one option occurrence and where it was written.
type setting struct {
	name, value string
	// set reports whether a value was given ("--direct" has none).
	set   bool
	where string // "job.fio:12" or "command line"
}

// section is a [global] or job section of a job file, or its command-line
// equivalent (options before the first --name are global).
type section struct {
	name     string
	global   bool
	where    string
	settings []setting
}

// builder resolves sections into jobs the way fio does: a global section
// changes the defaults of every job defined after it.
type builder struct {
	defaults *fiov1.Job
	globals  []*fiov1.Option
	jobs     []*fiov1.Job
	seeded   map[*fiov1.Job]bool // randseed given explicitly
	errs     []error
	readonly bool // --readonly: jobs that write are refused
}

func newBuilder() *builder {
	return &builder{defaults: defaultJob(), seeded: map[*fiov1.Job]bool{}}
}

// add applies one section.
func (b *builder) add(s section) {
	if err := checkUTF8(s); err != nil {
		b.errs = append(b.errs, err)
		return
	}
	if s.global {
		seeded := b.applyAll(b.defaults, s.settings)
		b.seeded[b.defaults] = b.seeded[b.defaults] || seeded
		for _, st := range s.settings {
			b.globals = append(b.globals, &fiov1.Option{Name: st.name, Value: st.value})
		}
		return
	}
	j := cloneJob(b.defaults)
	j.Name, j.Origin, j.Options = s.name, s.where, nil
	seeded := b.applyAll(j, s.settings)
	b.seeded[j] = b.seeded[b.defaults] || seeded
	for _, st := range s.settings {
		// fio's "job options" lists options given with a value only.
		if st.set {
			j.Options = append(j.Options, &fiov1.Option{Name: st.name, Value: st.value})
		}
	}
	b.jobs = append(b.jobs, j)
}

// checkUTF8 refuses text that is not UTF-8 or holds a NUL byte: names and
// paths travel in a protobuf spec, whose strings must be valid UTF-8, and
// the spec's own check refuses a NUL later without saying where.
func checkUTF8(s section) error {
	if !utf8.ValidString(s.name) || strings.IndexByte(s.name, 0) >= 0 {
		return fmt.Errorf("%s: job name %q: %w: not valid UTF-8 or a NUL byte", s.where, s.name, ErrInvalidValue)
	}
	for _, st := range s.settings {
		if !utf8.ValidString(st.name) || !utf8.ValidString(st.value) || strings.IndexByte(st.name+st.value, 0) >= 0 {
			return fmt.Errorf("%s: option %q=%q: %w: not valid UTF-8 or a NUL byte", st.where, st.name, st.value, ErrInvalidValue)
		}
	}
	return nil
}

// applyAll applies settings to j, collecting every problem; it reports
// whether randseed was among them. A name that is no general option is
// looked up among the options of the section's engine once the whole
// section is applied, as fio's fio_options_parse does (the engine may be
// named after its options).
func (b *builder) applyAll(j *fiov1.Job, settings []setting) (seeded bool) {
	var later []setting
	for _, st := range settings {
		if _, known := options[st.name]; !known && !fioOnly[st.name] && refused[st.name] == "" {
			later = append(later, st)
			continue
		}
		if err := applySetting(j, st); err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		seeded = seeded || st.name == "randseed"
	}
	for _, st := range later {
		if err := applyEngineOption(j, st); err != nil {
			b.errs = append(b.errs, err)
		}
	}
	return seeded
}

// applyEngineOption accepts an option of the job's engine: writepath's
// engines run with fio's engine defaults, so any is refused at run time
// (an engine that cannot run here is refused already).
func applyEngineOption(j *fiov1.Job, st setting) error {
	eng := engineName(j)
	if !engineOptions[eng][st.name] {
		return fmt.Errorf("%s: option %q: %w (supported: %s)", st.where, st.name, ErrUnknownOption, supportedNames())
	}
	if check := engineOptionValues[st.name]; check != nil {
		if err := check(st.value); err != nil {
			return fmt.Errorf("%s: option %s=%s: %w: %v", st.where, st.name, st.value, ErrInvalidValue, err)
		}
	}
	if _, runs := engineNames[eng]; runs {
		refuse(j, st.name, st.value, st.where, fmt.Sprintf("writepath's %s engine runs with fio's engine defaults; its %s option is not built", eng, st.name))
	}
	return nil
}

// applySetting applies one option, or says what is wrong and where. An
// option fio accepts that cannot run here is recorded on the job (see
// refuse.go), not an error.
func applySetting(j *fiov1.Job, st setting) error {
	name := st.name
	if a, ok := aliases[name]; ok {
		name = a
	}
	opt, ok := options[st.name]
	if !ok {
		refuse(j, name, st.value, st.where, reasonFor(st.name))
		return nil
	}
	v := st.value
	if !st.set {
		if !opt.flag {
			return fmt.Errorf("%s: option %q: %w: it needs a value (%s=...)", st.where, st.name, ErrInvalidValue, st.name)
		}
		v = "1"
	}
	err := opt.apply(j, v)
	var rr runRefusal
	switch {
	case errors.As(err, &rr):
		refuse(j, name, st.value, st.where, string(rr))
		return nil
	case err != nil:
		return fmt.Errorf("%s: option %s=%s: %w: %v", st.where, st.name, st.value, ErrInvalidValue, err)
	case notYet[st.name]:
		refuse(j, name, st.value, st.where, "not built in writepath yet")
		return nil
	}
	dropRefusal(j, name)
	return nil
}

// finish validates the jobs, fixes random seeds and returns the spec.
func (b *builder) finish(spec *fiov1.Spec) (*fiov1.Spec, error) {
	if len(b.jobs) == 0 && len(b.errs) == 0 {
		b.errs = append(b.errs, errors.New("no job defined: give --name=<job> with options, or a job file"))
	}
	clones, group := 0, uint32(0)
	seen := map[string]bool{}
	for i, j := range b.jobs {
		finalizeJob(j)
		// stonewall implies new_group, as in fio; the first job starts
		// group 0 whatever it says.
		if i > 0 && (j.Stonewall || j.NewGroup) {
			group++
		}
		j.Group = group
		if j.WaitFor != "" && !seen[j.WaitFor] {
			b.errs = append(b.errs, fmt.Errorf("%s: job %s: %w: wait_for=%s names no job defined before it", j.Origin, j.Name, ErrInvalidValue, j.WaitFor))
		}
		seen[j.Name] = true
		clones += int(j.Numjobs)
		b.errs = append(b.errs, validateJob(j)...)
		if b.readonly && j.Rw != fiov1.ReadWrite_READ_WRITE_READ && j.Rw != fiov1.ReadWrite_READ_WRITE_RANDREAD {
			b.errs = append(b.errs, fmt.Errorf("%s: job %s: %w: write operations are not allowed with the --readonly parameter", j.Origin, j.Name, ErrInvalidValue))
		}
		if !j.Randrepeat && !b.seeded[j] {
			j.Randseed = randomSeed()
		}
	}
	if clones > maxJobs {
		b.errs = append(b.errs, fmt.Errorf("%w: %d jobs (numjobs included): fio's maximum number of jobs is %d", ErrInvalidValue, clones, maxJobs))
	}
	if err := errors.Join(b.errs...); err != nil {
		return nil, err
	}
	spec.Jobs, spec.GlobalOptions = b.jobs, b.globals
	if spec.OutputFormat == fiov1.OutputFormat_OUTPUT_FORMAT_UNSPECIFIED {
		spec.OutputFormat = fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL
	}
	return spec, nil
}

// finishSpec is finish for callers that only need the spec or nothing.
func (b *builder) finishSpec() *fiov1.Spec {
	spec, err := b.finish(&fiov1.Spec{})
	if err != nil {
		return nil
	}
	return spec
}

// validateJob checks what depends on several options together.
func validateJob(j *fiov1.Job) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: job %s: %w: %s", j.Origin, j.Name, ErrInvalidValue, fmt.Sprintf(format, a...)))
	}
	if j.Name == "" {
		bad("the job has no name")
	}
	minBS := min(j.GetReadBs().GetMin(), j.GetWriteBs().GetMin())
	if minBS == 0 {
		minBS = j.Bs
	}
	if j.Size != 0 && j.Size < minBS {
		bad("size too small, must not be less than minimum block size: %d < %d", j.Size, minBS)
	}
	if j.Rwmixread > 100 {
		bad("rwmixread=%d is more than 100", j.Rwmixread)
	}
	if j.Iodepth == 0 || j.Numjobs == 0 || j.Loops == 0 || j.Bs == 0 {
		bad("iodepth, numjobs, loops and bs must be at least 1")
	}
	validateRate(j, bad)
	if j.ReadIolog != "" && j.Verify != fiov1.Verify_VERIFY_NONE && j.Verify != fiov1.Verify_VERIFY_UNSPECIFIED {
		bad("verify= with read_iolog is not supported (the replayed writes are not stamped)")
	}
	if j.ReadIolog != "" && j.WriteIolog != "" {
		// fio drops write_iolog then ("read iolog overrides write_iolog")
		bad("read_iolog overrides write_iolog in fio (it writes no log); give one of them")
	}
	if l := j.GetLogs(); l != nil && l.StoreCompressed && l.Hist != "" {
		bad("log_store_compressed with write_hist_log: fio stores histogram samples as pointers into its memory, which no file can hold")
	}
	checkCmdprio(j, bad)
	if isTrimRW(j.Rw) {
		if len(j.Rate) > 0 || j.RateIops > 0 || len(j.RateMin) > 0 || j.RateIopsMin > 0 {
			bad("rate options apply to reads and writes here; not with rw=%s", rwNamesOut[j.Rw])
		}
		if j.Verify != fiov1.Verify_VERIFY_NONE && j.Verify != fiov1.Verify_VERIFY_UNSPECIFIED {
			bad("verify= with rw=%s is not supported (trimmed blocks read back as zeroes or old data)", rwNamesOut[j.Rw])
		}
	}
	queued := j.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING
	if j.SerializeOverlap && queued && j.Iodepth > 1 && !j.SubmitOffload {
		bad("serialize_overlap is built for io_submit_mode=offload and the synchronous engines, not for libaio/io_uring queues")
	}
	return errs
}

// isTrimRW reports whether rw= trims.
func isTrimRW(rw fiov1.ReadWrite) bool {
	switch rw {
	case fiov1.ReadWrite_READ_WRITE_TRIM, fiov1.ReadWrite_READ_WRITE_RANDTRIM,
		fiov1.ReadWrite_READ_WRITE_TRIMWRITE, fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		return true
	}
	return false
}

// validateRate is fio's fixup_options check of the rate options.
func validateRate(j *fiov1.Job, bad func(string, ...any)) {
	sum := func(v []uint64) (t uint64) {
		for _, n := range v {
			t += n
		}
		return t
	}
	at := func(v []uint64, d int) uint64 {
		if d < len(v) {
			return v[d]
		}
		return 0
	}
	if (sum(j.Rate) > 0 && j.RateIops > 0) || (sum(j.RateMin) > 0 && j.RateIopsMin > 0) {
		bad("rate and rate_iops are mutually exclusive")
	}
	for d := 0; d < 2; d++ {
		iops := at(j.RateIopsDir, d)
		if len(j.RateIopsDir) == 0 {
			iops = j.RateIops
		}
		if r := at(j.Rate, d); (r > 0 && r < at(j.RateMin, d)) || (iops > 0 && iops < j.RateIopsMin) {
			bad("minimum rate exceeds rate, ddir %d", d)
		}
	}
}

// finalizeJob derives what depends on several options once all are
// applied: bs becomes the largest block size (the buffer size), a log
// prefix given as a bare flag becomes the job's final name.
func finalizeJob(j *fiov1.Job) {
	finalizeReplay(j)
	if l := j.Logs; l != nil {
		for _, p := range []*string{&l.Lat, &l.Bw, &l.Iops, &l.Hist} {
			if *p == logJobName {
				*p = j.Name
			}
		}
	}
	if d := j.RandomDistribution; d != fiov1.Distribution_DISTRIBUTION_RANDOM && d != fiov1.Distribution_DISTRIBUTION_UNSPECIFIED {
		j.Norandommap = true // fio: a non-uniform distribution excludes the random map
	} else if j.RandomLfsr {
		// fio's LFSR visits every block once per loop whatever
		// norandommap says; the random map gives the same guarantee.
		j.Norandommap = false
	}
	for _, b := range []*fiov1.BlockSizes{j.ReadBs, j.WriteBs} {
		if b != nil && b.Max > 0 {
			j.Bs = max(j.Bs, b.Max)
		}
	}
	if r, w := j.GetReadBs(), j.GetWriteBs(); r != nil && w != nil {
		j.Bs = max(r.Max, w.Max)
	}
	if isTrimRW(j.Rw) && j.TrimBs != nil {
		// the buffer must hold a trimwrite's write, which takes its trim's
		// length.
		j.Bs = max(j.Bs, j.TrimBs.Max)
	}
	if queued := j.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING; j.SubmitOffload && queued {
		// fio accepts it (its offload threads call the engine's queue);
		// writepath's offload pool runs synchronous calls only.
		refuse(j, "io_submit_mode", "offload", j.Origin, "io_submit_mode=offload runs the synchronous engines' calls from a pool of iodepth threads; libaio and io_uring queue their own I/O (use inline)")
	}
	checkDepths(j)
	if j.ZoneMode == zoneStrided && j.ZoneRange == 0 {
		j.ZoneRange = j.ZoneSize // fio: zonerange defaults to zonesize
	}
	if j.IoSize == 0 && j.Size == 0 && j.Filesize > 0 {
		// at least what the files hold: setup_files lowers it to that
		j.Size = max(j.Filesize, j.FilesizeMax) * uint64(fileCount(j))
	}
	refuseFileCombos(j)
	if j.IoSize > 0 && j.Size == 0 && j.SizePercent == 0 && j.Filename == "" {
		j.Size = j.IoSize
	}
}

// randomSeed draws a seed for randrepeat=0 once, when the spec is built,
// so that the spec alone still determines the run.
func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return binary.LittleEndian.Uint64(b[:])
}

// cloneJob copies a job (options slices are rebuilt by the caller).
func cloneJob(j *fiov1.Job) *fiov1.Job {
	c := proto.Clone(j).(*fiov1.Job)
	c.Options = nil
	return c
}
