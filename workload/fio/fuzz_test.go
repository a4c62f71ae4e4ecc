package fio

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/workload"
)

// FuzzParseArgs feeds arbitrary argument lists (one per line) to the
// command-line parser: it must never panic, and whatever it accepts must be
// a spec that New accepts and that survives a protobuf round trip.
func FuzzParseArgs(f *testing.F) {
	f.Add(strings.Join(issueArgs, "\n"))
	f.Add("--bs=4k\n--name=a\n--size=1m\n--name=b\n--rw=randrw\n--rwmixread=70\n--size=2m")
	f.Add("--name=x\n--size\n1g\n--output-format\njson")
	f.Add("--output-format=terse,json+\n--minimal\n--name=a\n--ioengine=null\n--size=(1024*1k)\n--bs=4k,8k\n--bssplit=4k/50:64k\n--name=b\n--stonewall\n--rw=randwrite:4\n--random_distribution=zipf:1.2")
	f.Add("--name=m\n--size=1m\n--nrfiles=3\n--filename_format=$jobname/$filenum\n--file_service_type=zipf:1.2:0.5\n--filesize=4k-64k\n--name=n\n--filename=a:b\\:c::d\n--file_service_type=roundrobin:4")
	f.Add("--section=x\n--max-jobs=4\n--eta=never\n--name=a\n--size=50%\n--bsrange=512-64k\n--blockalign=4k\n--percentile_list=50:99.9\n--lat_percentiles=1")
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\n")
		// Job file paths would read the disk; the job-file fuzzer covers them.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return
			}
		}
		spec, err := ParseArgs(args)
		if err != nil {
			return
		}
		if _, err := NewFromSpec(spec); err != nil {
			t.Fatalf("ParseArgs(%q) accepted a spec NewFromSpec rejects: %v", args, err)
		}
		b, err := proto.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(b); err != nil {
			t.Fatalf("round trip of %q: %v", args, err)
		}
	})
}

// FuzzParseJobFile feeds arbitrary job-file text to the INI parser and the
// resolver: no panics, and a job the parser accepts (as fio's --parse-only
// would) is either valid or refused by NewFromSpec as invalid or
// unsupported, each line of the refusal naming the file and line.
func FuzzParseJobFile(f *testing.F) {
	f.Add("[global]\nioengine=libaio\n[j]\nsize=1m\nrw=randwrite\n")
	f.Add("; comment\n# comment\n[a]\nsize=4k\nbs=4k\ntime_based\nruntime=1\n[b]\nname=c\nsize=${HOME}\n")
	f.Add("[x\nsize=1\n")
	f.Add("[global]\nioengine=null ; comment\nsize=$pagesize*2 # c\n[a]\nrw=read:64k\nbs=4k,8k\n[b]\nwait_for=a\nnew_group\nrandom_distribution=zoned:60/10:40/90\n")
	f.Add("[a]\nsize=(2^20)\ninclude /nonexistent.inc\nbssplit=4k/10:8k/90,16k\n")
	f.Fuzz(func(t *testing.T, text string) {
		secs, err := parseJobFile("fuzz.fio", text)
		if err != nil {
			return
		}
		b := newBuilder()
		for _, s := range secs {
			b.add(s)
		}
		spec := b.finishSpec()
		if spec == nil {
			return
		}
		_, err = NewFromSpec(spec)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrInvalidValue) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("job file %q: NewFromSpec: %v; want a refusal (invalid value or not supported)", text, err)
		}
		for _, l := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(l, "fuzz.fio:") {
				t.Fatalf("job file %q: refusal line %q does not say where (fuzz.fio:LINE)", text, l)
			}
		}
	})
}

// summarySample is a worker's summary of a two-clone randrw null job
// with fsyncs (rows without group_reporting).
const summarySample = "testdata/summary-null-randrw.json"

// summarySpecArgs is the job summarySample ran.
var summarySpecArgs = []string{"--name=x", "--ioengine=null", "--size=64k", "--bs=4k", "--rw=randrw", "--fsync=2", "--numjobs=2"}

// FuzzDecodeSummary feeds arbitrary bytes as a worker's summary: decoding
// never panics, and whatever it accepts prints and merges without panic
// in every output format.
func FuzzDecodeSummary(f *testing.F) {
	if b, err := os.ReadFile(summarySample); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"jobs":[],"writepath":{}}`))
	spec, err := ParseArgs(append([]string{"--output-format=terse,json+,normal"}, summarySpecArgs...))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeSummary(b, spec, "w"); err != nil {
			return
		}
		parts := []workload.Part{{Worker: "a", Summary: b}, {Worker: "b", Summary: b}}
		_ = WriteMerged(io.Discard, spec, parts)
		_ = WriteMerged(io.Discard, spec, parts[:1])
	})
}
