package advise

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is what `writepath advise` prints: the facts it saw and the
// findings, in JSON as in text.
type Report struct {
	Source   string       `json:"source"`
	DataDir  string       `json:"datadir,omitempty"`
	Devices  []DeviceLine `json:"devices,omitempty"`
	Findings []Finding    `json:"findings"`
	Notes    []string     `json:"notes,omitempty"`
}

// DeviceLine summarises a probed disk.
type DeviceLine struct {
	Role       string   `json:"role"`
	Dir        string   `json:"dir"`
	Device     string   `json:"device"`
	Model      string   `json:"model,omitempty"`
	Logical    int64    `json:"logical_block_size"`
	Physical   int64    `json:"physical_block_size"`
	Scheduler  string   `json:"scheduler"`
	NrRequests int      `json:"nr_requests"`
	Rotational bool     `json:"rotational"`
	WriteCache string   `json:"write_cache"`
	FSType     string   `json:"fstype,omitempty"`
	Options    []string `json:"mount_options,omitempty"`
}

// NewReport runs every rule on f.
func NewReport(f *Facts) Report {
	r := Report{Source: f.Source, DataDir: f.DataDir, Findings: Check(f), Notes: f.Notes}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	attachCampaigns(f, r.Findings)
	for _, d := range []struct {
		role string
		disk Disk
	}{{"data", f.Data}, {"redo", f.Redo}, {"doublewrite", f.Doublewrite}} {
		if d.disk.Known() {
			i := d.disk.Info
			r.Devices = append(r.Devices, DeviceLine{Role: d.role, Dir: d.disk.Dir, Device: d.disk.Device, Model: i.Model,
				Logical: i.LogicalBlockSize, Physical: i.PhysicalBlockSize, Scheduler: i.Scheduler, NrRequests: i.NrRequests,
				Rotational: i.Rotational, WriteCache: i.WriteCache, FSType: d.disk.FS.FSType, Options: d.disk.FS.Options})
		}
	}
	return r
}

// Campaigns are the findings' campaign files, in finding order.
func (r Report) Campaigns() []Campaign {
	var out []Campaign
	for _, f := range r.Findings {
		if f.Campaign != nil {
			out = append(out, *f.Campaign)
		}
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteText writes the report as tables: devices, then one block per
// finding with its evidence and suggestion.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "settings from %s; datadir %s\n\n", r.Source, orUnknown(r.DataDir))
	if len(r.Devices) > 0 {
		fmt.Fprintln(tw, "ROLE\tDEVICE\tFS\tLOGICAL\tPHYSICAL\tSCHEDULER\tNR_REQ\tROTATIONAL\tCACHE\tDIR")
		for _, d := range r.Devices {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%v\t%s\t%s\n", d.Role, d.Device, d.FSType, d.Logical, d.Physical,
				d.Scheduler, d.NrRequests, d.Rotational, d.WriteCache, d.Dir)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "%d finding(s)\n", len(r.Findings))
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "\n[%s] %s: %s\n", strings.ToUpper(string(f.Severity)), f.Rule, f.Problem)
		for _, e := range f.Evidence {
			fmt.Fprintf(tw, "    %s\t%s\n", e.Name, e.Value)
		}
		fmt.Fprintf(tw, "  suggest:\t%s\n  why:\t%s\n", f.Suggest, f.Why)
		if c := f.Campaign; c != nil {
			fmt.Fprintf(tw, "  measure it:\t%s (%s)\n", c.Run, c.File)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "\nnote: %s\n", n)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
