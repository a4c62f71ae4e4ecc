package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/hist"
)

// Apache ECharts 5.6.0 (dist/echarts.min.js from the npm package; Apache-2.0,
// see assets/ECHARTS-LICENSE). Embedded whole so the report opens offline.
//
//go:embed assets/echarts.min.js
var echartsJS string

//go:embed assets/report.js
var reportJS string

//go:embed assets/report.html.tmpl
var pageTmpl string

var page = template.Must(template.New("report").Parse(pageTmpl))

// Run is one run as the report draws it. Series are aligned: index k of
// every slice is merged interval k.
type Run struct {
	ID       string
	Title    string
	Kind     string
	State    string
	Started  time.Time
	Interval time.Duration
	Ops      []OpSeries
	Workers  []WorkerRow
	Devices  []Series // iostat -x per device, e.g. Name "vda w/s"
	InnoDB   []Series // InnoDB counters and checkpoint age
	// Block and Syscalls are the kernel-evidence series over time (block
	// layer: D2C/Q2D p99 per device and op, ms; syscalls: fsync p99 ms,
	// write sizes p50 bytes); Evidence their whole-run figures.
	Block, Syscalls []Series
	Evidence        []EvidenceRow
	Host            []HostRow
	// Disk is a disk profile's credit balance and cap in force, drawn
	// under the throughput chart.
	Disk  []Series
	Notes []string // matched log lines, warnings
	// Timeline is a crash run's restart per round, drawn as the phases
	// from the kill to the first commit.
	Timeline []TimelineRound
}

// TimelineRound is one crash round's restart: its points in order (kill,
// process start, recovery start, redo applied, ready, first commit) as
// milliseconds after the kill; a point the restart never reached is
// absent.
type TimelineRound struct {
	Round  int
	Points []TimelinePoint
}

// TimelinePoint is one moment of a restart.
type TimelinePoint struct {
	Name string
	Ms   float64
}

// HostRow is one host knob on one target of one worker, as the run set
// it: before, set, read back.
type HostRow struct {
	Worker, Knob, Target, Before, Set, Read string
}

// OpSeries is one operation's time series and its whole-run histogram.
type OpSeries struct {
	Name           string
	T              []float64 // seconds since the common start
	Rate           []float64 // operations per second
	MBps           []float64 // may be nil for operations that move no bytes
	P50, P99, P999 []float64 // milliseconds
	Total          *hist.Histogram
}

// EvidenceRow is one kernel-evidence series over the whole run (Unit "ms"
// or "bytes").
type EvidenceRow struct {
	Name, Unit          string
	Count               int64
	P50, P99, P999, Max float64
}

// WorkerRow is one worker's share of the run.
type WorkerRow struct {
	Name        string
	Ops         int64
	Rate        float64
	P99Ms       float64
	StartSkewMs float64
}

// Series is a named numeric time series on the run's interval grid.
type Series struct {
	Name   string
	Unit   string
	T      []float64
	Values []float64
}

// Campaign is a campaign's result table with each cell's rounds.
type Campaign struct {
	Table campaign.Table
	Unit  string // "tps", "iops"
	Runs  []Run  // optional: runs to draw below the table
}

// jsonCampaign is what the page's script reads of a campaign: the table
// for its charts and the table's text as the text table prints it (the
// same columns per kind, the same telemetry columns).
type jsonCampaign struct {
	Table campaign.Table
	Unit  string
	Head  []string
	Rows  [][]string
}

func campaignJSON(c Campaign) jsonCampaign {
	cols := columns(c.Table, c.Unit)
	j := jsonCampaign{Table: c.Table, Unit: c.Unit, Head: header(c.Table, c.Unit)}
	for _, r := range c.Table.Rows {
		j.Rows = append(j.Rows, cells(c.Table, r, cols))
	}
	return j
}

// jsonRun is what the page's script reads.
type jsonRun struct {
	ID, Title, Kind, State, Started string
	IntervalS                       float64
	Ops                             []jsonOp
	Workers                         []WorkerRow
	Devices, InnoDB                 []Series
	Block, Syscalls                 []Series        `json:",omitempty"`
	Evidence                        []EvidenceRow   `json:",omitempty"`
	Host                            []HostRow       `json:",omitempty"`
	Disk                            []Series        `json:",omitempty"`
	Timeline                        []TimelineRound `json:",omitempty"`
	Notes                           []string
}

type jsonOp struct {
	Name                 string
	T, Rate, MBps        []float64
	P50, P99, P999       []float64
	Dist                 [][2]float64 // [percentile, ms] for the HDR plot
	Count                int64
	MeanMs, MaxMs, P99Ms float64
}

// WriteRunHTML writes a self-contained HTML report of one run.
func WriteRunHTML(w io.Writer, r Run) error {
	return render(w, r.Title, map[string]any{"runs": []jsonRun{toJSON(r)}})
}

// WriteCampaignHTML writes a self-contained HTML report of a campaign: the
// cell x group bar chart with the rounds' spread, the table, and any runs.
func WriteCampaignHTML(w io.Writer, c Campaign) error {
	return WriteCampaignsHTML(w, "campaign "+c.Table.Campaign, []Campaign{c})
}

// WriteCampaignsHTML writes one report of several campaigns (the
// quickstart's): each campaign's charts and table, then every campaign's
// runs.
func WriteCampaignsHTML(w io.Writer, title string, cs []Campaign) error {
	var camps []jsonCampaign
	runs := []jsonRun{}
	for _, c := range cs {
		camps = append(camps, campaignJSON(c))
		for _, r := range c.Runs {
			runs = append(runs, toJSON(r))
		}
	}
	return render(w, title, map[string]any{"campaigns": camps, "runs": runs})
}

func render(w io.Writer, title string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("report data: %w", err)
	}
	return page.Execute(w, map[string]any{
		"Title":   title,
		"Data":    template.JS(b),
		"ECharts": template.JS(echartsJS),
		"Script":  template.JS(reportJS),
	})
}

// distPercentiles are the points of the percentile distribution plot, from
// the median to 99.999 (as HdrHistogram's plotter shows them).
var distPercentiles = []float64{0, 10, 20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 87.5, 90, 92.5, 95, 96, 97, 97.5, 98, 98.5, 99, 99.25, 99.5, 99.75, 99.9, 99.95, 99.99, 99.995, 99.999, 100}

func toJSON(r Run) jsonRun {
	j := jsonRun{ID: r.ID, Title: r.Title, Kind: r.Kind, State: r.State,
		IntervalS: r.Interval.Seconds(), Workers: r.Workers, Devices: r.Devices, InnoDB: r.InnoDB, Host: r.Host, Notes: r.Notes,
		Block: r.Block, Syscalls: r.Syscalls, Evidence: r.Evidence, Disk: r.Disk, Timeline: r.Timeline}
	if !r.Started.IsZero() {
		j.Started = r.Started.UTC().Format(time.RFC3339)
	}
	for _, o := range r.Ops {
		jo := jsonOp{Name: o.Name, T: o.T, Rate: o.Rate, MBps: o.MBps, P50: o.P50, P99: o.P99, P999: o.P999}
		if h := o.Total; h != nil && h.Count() > 0 {
			vals := h.Percentiles(distPercentiles)
			for i, p := range distPercentiles {
				jo.Dist = append(jo.Dist, [2]float64{p, float64(vals[i]) / 1e6})
			}
			jo.Count, jo.MeanMs, jo.MaxMs, jo.P99Ms = h.Count(), h.Mean()/1e6, float64(h.Max())/1e6, float64(h.Percentile(99))/1e6
		}
		j.Ops = append(j.Ops, jo)
	}
	return j
}
