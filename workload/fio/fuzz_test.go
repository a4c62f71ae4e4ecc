package fio

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzParseArgs feeds arbitrary argument lists (one per line) to the
// command-line parser: it must never panic, and whatever it accepts must be
// a spec that New accepts and that survives a protobuf round trip.
func FuzzParseArgs(f *testing.F) {
	f.Add(strings.Join(issueArgs, "\n"))
	f.Add("--bs=4k\n--name=a\n--size=1m\n--name=b\n--rw=randrw\n--rwmixread=70\n--size=2m")
	f.Add("--name=x\n--size\n1g\n--output-format\njson")
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
		if _, err := New(spec); err != nil {
			t.Fatalf("ParseArgs(%q) accepted a spec New rejects: %v", args, err)
		}
		b, err := proto.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newFromBytes(b); err != nil {
			t.Fatalf("round trip of %q: %v", args, err)
		}
	})
}

// FuzzParseJobFile feeds arbitrary job-file text to the INI parser and the
// resolver: no panics, and every accepted job is valid.
func FuzzParseJobFile(f *testing.F) {
	f.Add("[global]\nioengine=libaio\n[j]\nsize=1m\nrw=randwrite\n")
	f.Add("; comment\n# comment\n[a]\nsize=4k\nbs=4k\ntime_based\nruntime=1\n[b]\nname=c\nsize=${HOME}\n")
	f.Add("[x\nsize=1\n")
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
		if _, err := New(spec); err != nil {
			t.Fatalf("job file %q accepted but New rejects it: %v", text, err)
		}
	})
}
