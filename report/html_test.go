package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/testenv"
)

// sampleRun is a 60-interval run with a stall at 30 s, built from real
// histograms the way the fabric's merged intervals are.
func sampleRun() Run {
	rng := rand.New(rand.NewPCG(1, 2))
	total := hist.New()
	op := OpSeries{Name: "write", Total: total}
	var dev, innodb Series
	dev = Series{Name: "vda w/s", Unit: "IOPS"}
	kbs := Series{Name: "vda wkB/s", Unit: "KiB/s"}
	util := Series{Name: "vda %util", Unit: "%"}
	redo := Series{Name: "redo written", Unit: "MB/s"}
	d2c := Series{Name: "vda write d2c p99", Unit: "ms"}
	fsync := Series{Name: "fdatasync p99", Unit: "ms"}
	innodb = Series{Name: "checkpoint age", Unit: "MiB"}
	for k := 0; k < 60; k++ {
		h := hist.New()
		n := 4000 + rng.IntN(500)
		if k == 30 {
			n = 300
		}
		for i := 0; i < n; i++ {
			v := int64(200_000 + rng.ExpFloat64()*300_000)
			if k == 30 {
				v *= 40
			}
			h.Record(v)
		}
		_ = total.Merge(h)
		t := float64(k + 1)
		op.T = append(op.T, t)
		op.Rate = append(op.Rate, float64(h.Count()))
		op.MBps = append(op.MBps, float64(h.Count())*4096/1e6)
		op.P50 = append(op.P50, float64(h.Percentile(50))/1e6)
		op.P99 = append(op.P99, float64(h.Percentile(99))/1e6)
		op.P999 = append(op.P999, float64(h.Percentile(99.9))/1e6)
		dev.T, dev.Values = append(dev.T, t), append(dev.Values, float64(n)*1.1)
		kbs.T, kbs.Values = append(kbs.T, t), append(kbs.Values, float64(n)*4.4)
		util.T, util.Values = append(util.T, t), append(util.Values, 40+float64(k%9))
		redo.T, redo.Values = append(redo.T, t), append(redo.Values, 12+float64(k%4))
		d2c.T, d2c.Values = append(d2c.T, t), append(d2c.Values, 0.4+float64(k%7)/10)
		fsync.T, fsync.Values = append(fsync.T, t), append(fsync.Values, 1.5+float64(k%5)/4)
		innodb.T, innodb.Values = append(innodb.T, t), append(innodb.Values, float64(k%20)*10)
	}
	return Run{
		ID: "20261130T104500-abc", Title: "fio randwrite 4k", Kind: "fio", State: "finished",
		Started: time.Date(2026, 11, 30, 10, 45, 0, 0, time.UTC), Interval: time.Second,
		Ops: []OpSeries{op}, Devices: []Series{dev, kbs, util}, InnoDB: []Series{innodb, redo},
		Workers: []WorkerRow{{Name: "w1", Ops: 120000, Rate: 2000, P99Ms: 1.2}, {Name: "w2", Ops: 118000, Rate: 1966, P99Ms: 1.4}},
		Notes:   []string{"stall at 30 s"},
		Block:   []Series{d2c}, Syscalls: []Series{fsync},
		Evidence: []EvidenceRow{{Name: "block.vda.write.d2c", Unit: "ms", Count: 238000, P50: 0.08, P99: 0.7, P999: 1.5, Max: 20},
			{Name: "sys.write.bytes", Unit: "bytes", Count: 5000, P50: 4096, P99: 16384, P999: 65536, Max: 1 << 20}},
	}
}

func TestWriteRunHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRunHTML(&b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	// Nothing may be fetched: no external script, stylesheet or font.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(html); m != "" {
		t.Errorf("report references the network: %q", m)
	}
	if !strings.Contains(html, "echarts") || !strings.Contains(html, `"Name":"write"`) {
		t.Error("report lacks the embedded chart library or the run's data")
	}
}

// reportKinds are the reports writepath writes, one of each kind, from
// synthetic data shaped as runview and the campaign tables make it.
func reportKinds() []struct {
	name   string
	write  func(io.Writer) error
	charts []string
} {
	return []struct {
		name   string
		write  func(io.Writer) error
		charts []string
	}{
		{"run-fio", func(w io.Writer) error { return WriteRunHTML(w, sampleRun()) },
			[]string{"r0-throughput", "r0-bandwidth", "r0-latency", "r0-distribution", "r0-workers", "r0-workers-p99", "r0-iostat-0", "r0-iostat-1",
				"r0-iostat-2", "r0-innodb-0", "r0-innodb-1", "r0-block-0", "r0-syscalls-0"}},
		{"run-oltp", func(w io.Writer) error { return WriteRunHTML(w, sampleOLTPRun()) },
			[]string{"r0-throughput", "r0-latency", "r0-innodb-0", "r0-innodb-1", "r0-innodb-2"}},
		{"run-crash", func(w io.Writer) error { return WriteRunHTML(w, sampleCrashRun()) },
			[]string{"r0-throughput", "r0-timeline"}},
		{"campaign-fio", func(w io.Writer) error { return WriteCampaignHTML(w, sampleCampaign()) },
			[]string{"campaign-bars", "campaign-latency", "campaign-col0", "campaign-col1", "r0-throughput"}},
		{"campaign-crash", func(w io.Writer) error { return WriteCampaignHTML(w, sampleCrashCampaign()) },
			[]string{"campaign-recovery", "campaign-col0", "r0-timeline"}},
		{"campaigns", func(w io.Writer) error {
			return WriteCampaignsHTML(w, "quickstart", []Campaign{sampleCampaign(), sampleOLTPCampaign(), sampleCrashCampaign()})
		}, []string{"campaign-bars", "campaign1-bars", "campaign1-latency", "campaign2-recovery", "r0-throughput", "r1-throughput", "r2-timeline"}},
	}
}

// TestReportRendersInChromium loads each kind of report in Debian's
// headless Chromium with every network path blocked and checks that the
// page raised no error, that each expected chart finished rendering with
// data, and, from every chart's options, that no axis carries two units
// and each names its unit; then saves a screenshot beside the test's
// artifacts (and in $WRITEPATH_SCREENSHOTS, `make screenshots`: docs/).
func TestReportRendersInChromium(t *testing.T) {
	chromium := testenv.Chromium(t)
	dir := t.ArtifactDir()
	shots := os.Getenv("WRITEPATH_SCREENSHOTS")
	for _, tt := range reportKinds() {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".html")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.write(f); err != nil {
				t.Fatal(err)
			}
			f.Close()
			dom := headless(t, chromium, path, "--dump-dom")
			if m := regexp.MustCompile(`data-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
				t.Errorf("the page logged errors: %s", m[1])
			}
			for _, id := range tt.charts {
				m := regexp.MustCompile(`data-chart="` + id + `"[^>]*data-points="(\d+)"`).FindStringSubmatch(dom)
				if m == nil || m[1] == "0" {
					t.Errorf("chart %s did not render with data (match %v)", id, m)
				}
			}
			checkAxes(t, dom)
			switch tt.name {
			case "run-fio":
				for _, want := range []string{"<table data-evidence=", "<td>block.vda.write.d2c</td>", "<td>16384</td>"} {
					if !strings.Contains(dom, want) {
						t.Errorf("rendered page lacks %q (the kernel evidence table)", want)
					}
				}
			case "campaign-fio":
				for _, want := range []string{"nvme dev p99</th>", "pl1 w_await ms</th>", "pl1 MB/s</th>"} {
					if !strings.Contains(dom, want) {
						t.Errorf("campaign table lacks %q", want)
					}
				}
			case "campaign-crash", "campaigns":
				for _, want := range []string{"local recovery</th>", "local kill&gt;commit</th>", "local verdict</th>", "<td>ok</td>"} {
					if !strings.Contains(dom, want) {
						t.Errorf("crash campaign table lacks %q", want)
					}
				}
			}
			shot := filepath.Join(dir, tt.name+".png")
			headless(t, chromium, path, "--screenshot="+shot, "--window-size=1400,1800")
			if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
				t.Errorf("screenshot %s missing or blank: %v", shot, err)
			}
			if shots != "" {
				b, err := os.ReadFile(shot)
				if err == nil {
					err = os.WriteFile(filepath.Join(shots, "report-"+tt.name+".png"), b, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// checkAxes reads every chart's data-axes (each value axis: its name and
// the units of its series) and fails on an axis with two units, a series
// without one, or an axis not named by its unit.
func checkAxes(t *testing.T, dom string) {
	t.Helper()
	n := 0
	for _, m := range regexp.MustCompile(`data-chart="([^"]+)"[^>]*data-axes="([^"]*)"`).FindAllStringSubmatch(dom, -1) {
		var axes []struct {
			Name  string
			Units []string
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(m[2])), &axes); err != nil {
			t.Errorf("chart %s: data-axes %q: %v", m[1], m[2], err)
			continue
		}
		n++
		for i, a := range axes {
			switch {
			case len(a.Units) > 1:
				t.Errorf("chart %s axis %d (%q) mixes units %v", m[1], i, a.Name, a.Units)
			case len(a.Units) == 1 && a.Units[0] == "?":
				t.Errorf("chart %s axis %d: a series without a unit", m[1], i)
			case len(a.Units) == 1 && a.Units[0] != "" && a.Name != a.Units[0]:
				t.Errorf("chart %s axis %d is named %q but draws %q", m[1], i, a.Name, a.Units[0])
			}
		}
	}
	if n == 0 {
		t.Error("no chart carries data-axes")
	}
}

func headless(t *testing.T, chromium, path string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
		// The network is off: every host resolves to nothing and no proxy works.
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--virtual-time-budget=10000", "--hide-scrollbars",
	}, extra...)
	args = append(args, "file://"+path)
	out, err := exec.CommandContext(ctx, chromium, args...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", extra, err)
	}
	return string(out)
}

func sampleCampaign() Campaign {
	return Campaign{Table: campaign.Table{
		Campaign: "flush", Kind: "fio", KindColumns: fioColumns, Groups: []string{"pl1", "nvme"}, Baseline: "fsync",
		Columns: []campaign.Column{{Key: "w_await", Unit: "ms"}, {Key: "%util", Unit: "%"}},
		Rows: []campaign.Row{
			{Label: "fsync", Aggs: []campaign.Agg{{Rounds: 3, Throughput: 3820, ThroughputMin: 3700, ThroughputMax: 3900, P99: 4_100_000, DeviceP99: 900_000, MBps: 15.6,
				Figures: map[string]campaign.Figure{"w_await": {Median: 0.4, Min: 0.3, Max: 0.5, N: 3}, "%util": {Median: 61, Min: 58, Max: 64, N: 3}}},
				{Rounds: 3, Throughput: 11200, ThroughputMin: 10900, ThroughputMax: 11600, P99: 1_000_000}}},
			{Label: "O_DSYNC", Aggs: []campaign.Agg{{Rounds: 3, Throughput: 1910, ThroughputMin: 1800, ThroughputMax: 2000, P99: 88_000_000, DeltaPct: -50,
				Figures: map[string]campaign.Figure{"w_await": {Median: 2.1, Min: 1.9, Max: 2.4, N: 3}, "%util": {Median: 92, Min: 90, Max: 95, N: 3}}},
				{Rounds: 3, Throughput: 6700, ThroughputMin: 6500, ThroughputMax: 6900, P99: 3_000_000, DeltaPct: -40.2}}},
		}}, Unit: "tps", Runs: []Run{sampleRun()}}
}

// sampleOLTPRun is a transactional run: trx, InnoDB rates and levels.
func sampleOLTPRun() Run {
	r := sampleRun()
	r.Title, r.Kind = "oltp_write_only 16 threads", "oltp"
	r.Ops[0].Name, r.Ops[0].MBps = "trx", nil
	r.Evidence, r.Block, r.Syscalls = nil, nil, nil
	dirty := Series{Name: "dirty pages", Unit: "pages", T: r.Ops[0].T}
	waits := Series{Name: "log waits", Unit: "/s", T: r.Ops[0].T}
	for k := range r.Ops[0].T {
		dirty.Values = append(dirty.Values, 1000+float64(k*20))
		waits.Values = append(waits.Values, float64(k%3))
	}
	r.InnoDB = append(r.InnoDB, dirty, waits)
	return r
}

// sampleCrashRun is a crash run of two rounds with their restarts.
func sampleCrashRun() Run {
	r := sampleOLTPRun()
	r.Title, r.Kind = "crash recovery, 2 rounds", "crash"
	for i, scale := range []float64{1, 1.3} {
		r.Timeline = append(r.Timeline, TimelineRound{Round: i + 1, Points: []TimelinePoint{
			{"kill", 0}, {"process start", 68 * scale}, {"recovery start", 177 * scale}, {"redo applied", 317 * scale},
			{"ready", 355 * scale}, {"first commit", 407 * scale}}})
	}
	return r
}

func sampleOLTPCampaign() Campaign {
	return Campaign{Table: campaign.Table{Campaign: "quickstart-oltp", Kind: "oltp", KindColumns: oltpColumns, Groups: []string{"local"}, Baseline: "threads=1",
		Rows: []campaign.Row{
			{Label: "threads=1", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 112, ThroughputMin: 112, ThroughputMax: 112, P95: 30e6, P99: 161e6}}},
			{Label: "threads=8", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 275, ThroughputMin: 275, ThroughputMax: 275, P95: 106e6, P99: 348e6, DeltaPct: 146}}},
		}}, Unit: "tps", Runs: []Run{sampleOLTPRun()}}
}

func sampleCrashCampaign() Campaign {
	fig := func(med, lo, hi float64, n int) campaign.Figure {
		return campaign.Figure{Median: med, Min: lo, Max: hi, N: n, Sum: med * float64(n)}
	}
	cell := func(rec float64, delta float64) campaign.Agg {
		return campaign.Agg{Rounds: 1, Throughput: 161, Figures: map[string]campaign.Figure{
			campaign.FigRecoveryMS:   {Median: rec, Min: rec * 0.8, Max: rec * 1.2, N: 3, DeltaPct: delta},
			campaign.FigStartQueryMS: fig(rec*1.6, rec*1.4, rec*1.9, 3), campaign.FigKillCommitMS: fig(rec*2.2, rec*2, rec*2.5, 3),
			campaign.FigLost: {N: 3}, campaign.FigCrashRounds: {Sum: 3, N: 3}, campaign.FigLoadTPS: fig(1196, 1100, 1250, 3),
			campaign.FigLoadP99MS: fig(26.6, 25, 28, 3), "dirty": fig(494, 494, 494, 1)}}
	}
	return Campaign{Table: campaign.Table{Campaign: "quickstart-crash", Kind: "crash", KindColumns: crashColumns, Groups: []string{"local"},
		Baseline: "innodb_flush_log_at_trx_commit=1", Columns: []campaign.Column{{Key: "dirty", Unit: "pages"}},
		Rows: []campaign.Row{
			{Label: "innodb_flush_log_at_trx_commit=1", Aggs: []campaign.Agg{cell(178, 0)}},
			{Label: "innodb_flush_log_at_trx_commit=2", Aggs: []campaign.Agg{cell(240, 34.8)}},
		}}, Unit: "tps", Runs: []Run{sampleCrashRun()}}
}
