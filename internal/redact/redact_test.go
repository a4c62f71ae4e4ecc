package redact

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestRunSpecPasswordRedacted (issue 13, point 10): a stored run whose
// oltp spec carries a password prints without it, and the original stays
// as it was.
func TestRunSpecPasswordRedacted(t *testing.T) {
	spec := &oltpv1.Spec{Connection: &oltpv1.Connection{Host: "db1", Password: "s3cret-pw"}}
	b, _ := proto.Marshal(spec)
	run := &writepathv1.Run{Id: "r1", Spec: &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: "type.googleapis.com/writepath.oltp.v1.Spec", Value: b}}}
	red := Message(run)
	out, err := protojson.Marshal(red)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cret-pw") || !strings.Contains(string(out), Mask) || !strings.Contains(string(out), "db1") {
		t.Errorf("redacted run JSON = %s; want the password masked and the rest kept", out)
	}
	var orig oltpv1.Spec
	proto.Unmarshal(run.GetSpec().GetSpec().GetValue(), &orig)
	if orig.GetConnection().GetPassword() != "s3cret-pw" {
		t.Errorf("the original run was changed")
	}
}

// TestUnknownSpecShowsItsTypeAlone: a run whose kind spec this binary
// cannot read (fleetsim's, a newer worker's) prints as JSON with the
// spec's type name and without its bytes, which could hold a secret no
// one can find; `runs show --json` failed on it ("unable to resolve").
func TestUnknownSpecShowsItsTypeAlone(t *testing.T) {
	const url = "type.googleapis.com/writepath.elsewhere.v1.Spec"
	run := &writepathv1.Run{Id: "r1", Spec: &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: url, Value: []byte("\x0a\x09s3cret-pw")}}}
	red := Message(run)
	out, err := protojson.MarshalOptions{Resolver: Resolver}.Marshal(red)
	if err != nil {
		t.Fatalf("JSON of a run with an unknown spec: %v", err)
	}
	if strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "CXMz") || !strings.Contains(string(out), url) {
		t.Errorf("JSON = %s; want the spec's type name alone", out)
	}
	if len(run.GetSpec().GetSpec().GetValue()) == 0 {
		t.Errorf("the original run was changed")
	}
}
