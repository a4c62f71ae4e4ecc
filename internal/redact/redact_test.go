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
