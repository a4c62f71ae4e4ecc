package fio

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
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

// checkUTF8 refuses text that is not UTF-8: names and paths travel in a
// protobuf spec, whose strings must be valid UTF-8.
func checkUTF8(s section) error {
	if !utf8.ValidString(s.name) {
		return fmt.Errorf("%s: job name %q: %w: not valid UTF-8", s.where, s.name, ErrInvalidValue)
	}
	for _, st := range s.settings {
		if !utf8.ValidString(st.name) || !utf8.ValidString(st.value) {
			return fmt.Errorf("%s: option %q=%q: %w: not valid UTF-8", st.where, st.name, st.value, ErrInvalidValue)
		}
	}
	return nil
}

// applyAll applies settings to j, collecting every problem; it reports
// whether randseed was among them.
func (b *builder) applyAll(j *fiov1.Job, settings []setting) (seeded bool) {
	for _, st := range settings {
		if err := applySetting(j, st); err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		seeded = seeded || st.name == "randseed"
	}
	return seeded
}

// applySetting applies one option, or says what is wrong and where.
func applySetting(j *fiov1.Job, st setting) error {
	opt, ok := options[st.name]
	if !ok {
		return fmt.Errorf("%s: option %q: %w (supported: %s)", st.where, st.name, ErrUnknownOption, supportedNames())
	}
	v := st.value
	if !st.set {
		if !opt.flag {
			return fmt.Errorf("%s: option %q: %w: it needs a value (%s=...)", st.where, st.name, ErrInvalidValue, st.name)
		}
		v = "1"
	}
	if err := opt.apply(j, v); err != nil {
		return fmt.Errorf("%s: option %s=%s: %w: %v", st.where, st.name, st.value, ErrInvalidValue, err)
	}
	return nil
}

// finish validates the jobs, fixes random seeds and returns the spec.
func (b *builder) finish(spec *fiov1.Spec) (*fiov1.Spec, error) {
	if len(b.jobs) == 0 && len(b.errs) == 0 {
		b.errs = append(b.errs, errors.New("no job defined: give --name=<job> with options, or a job file"))
	}
	for _, j := range b.jobs {
		b.errs = append(b.errs, validateJob(j)...)
		if !j.Randrepeat && !b.seeded[j] {
			j.Randseed = randomSeed()
		}
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
	if j.Size == 0 && j.Filename == "" {
		bad("size= is required (fio: you need to specify size=)")
	}
	if j.Size != 0 && j.Size < j.Bs {
		bad("size=%d is smaller than bs=%d", j.Size, j.Bs)
	}
	if j.Rwmixread > 100 {
		bad("rwmixread=%d is more than 100", j.Rwmixread)
	}
	if j.Iodepth == 0 || j.Numjobs == 0 || j.Loops == 0 || j.Bs == 0 {
		bad("iodepth, numjobs, loops and bs must be at least 1")
	}
	return errs
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
