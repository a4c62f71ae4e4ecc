package store

import (
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func TestCampaignsRoundTripAndOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20261130-100000.000", "20261130-110000.000"} {
		c := &writepathv1.Campaign{Id: id, Plan: &writepathv1.CampaignPlan{Name: "n"},
			Runs: []*writepathv1.CampaignRun{{Index: 0, RunId: "r", Done: true}}}
		if err := st.PutCampaign(c); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.ListCampaigns(0)
	if err != nil || len(list) != 2 || list[0].GetId() != "20261130-110000.000" {
		t.Fatalf("ListCampaigns(0) = %v, %v; want 2, newest first", list, err)
	}
	got, err := st.GetCampaign("20261130-100000.000")
	if err != nil || !proto.Equal(got.GetRuns()[0], &writepathv1.CampaignRun{Index: 0, RunId: "r", Done: true}) {
		t.Fatalf("GetCampaign = %v, %v", got, err)
	}
	if _, err := st.GetCampaign("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetCampaign(nope) = %v; want ErrNotFound", err)
	}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
}
