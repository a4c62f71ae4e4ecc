package report

import (
	"bytes"
	"context"
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
	dev = Series{Name: "vda w/s"}
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
		d2c.T, d2c.Values = append(d2c.T, t), append(d2c.Values, 0.4+float64(k%7)/10)
		fsync.T, fsync.Values = append(fsync.T, t), append(fsync.Values, 1.5+float64(k%5)/4)
		innodb.T, innodb.Values = append(innodb.T, t), append(innodb.Values, float64(k%20)*10)
	}
	return Run{
		ID: "20261130T104500-abc", Title: "fio randwrite 4k", Kind: "fio", State: "finished",
		Started: time.Date(2026, 11, 30, 10, 45, 0, 0, time.UTC), Interval: time.Second,
		Ops: []OpSeries{op}, Devices: []Series{dev}, InnoDB: []Series{innodb},
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

// TestReportRendersInChromium loads the report in Debian's headless
// Chromium with every network path blocked and checks that each expected
// chart finished rendering with data, then saves a screenshot beside the
// test's artifacts (go test -artifacts keeps it).
func TestReportRendersInChromium(t *testing.T) {
	chromium := testenv.Chromium(t)
	dir := t.ArtifactDir()
	tests := []struct {
		name   string
		write  func(*os.File) error
		charts []string
	}{
		{"run", func(f *os.File) error { return WriteRunHTML(f, sampleRun()) },
			[]string{"r0-throughput", "r0-latency", "r0-distribution", "r0-workers", "r0-iostat", "r0-innodb", "r0-block", "r0-syscalls"}},
		{"campaign", func(f *os.File) error { return WriteCampaignHTML(f, sampleCampaign()) },
			[]string{"campaign-bars", "r0-throughput"}},
	}
	for _, tt := range tests {
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
			for _, want := range []string{"<table data-evidence=", "<td>block.vda.write.d2c</td>", "<td>16384</td>"} {
				if !strings.Contains(dom, want) {
					t.Errorf("rendered page lacks %q (the kernel evidence table)", want)
				}
			}
			if tt.name == "campaign" && !strings.Contains(dom, "nvme dev p99</th>") {
				t.Error("campaign table lacks the dev p99 column")
			}
			for _, id := range tt.charts {
				m := regexp.MustCompile(`data-chart="` + id + `"[^>]*data-points="(\d+)"`).FindStringSubmatch(dom)
				if m == nil || m[1] == "0" {
					t.Errorf("chart %s did not render with data (match %v)", id, m)
				}
			}
			shot := filepath.Join(dir, tt.name+".png")
			headless(t, chromium, path, "--screenshot="+shot, "--window-size=1400,1800")
			if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
				t.Errorf("screenshot %s missing or blank: %v", shot, err)
			}
			t.Logf("screenshot: %s", shot)
		})
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
		Campaign: "flush", Groups: []string{"pl1", "nvme"}, Baseline: "fsync",
		Rows: []campaign.Row{
			{Label: "fsync", Aggs: []campaign.Agg{{Rounds: 3, Throughput: 3820, ThroughputMin: 3700, ThroughputMax: 3900, P99: 4_100_000, DeviceP99: 900_000},
				{Rounds: 3, Throughput: 11200, ThroughputMin: 10900, ThroughputMax: 11600, P99: 1_000_000}}},
			{Label: "O_DSYNC", Aggs: []campaign.Agg{{Rounds: 3, Throughput: 1910, ThroughputMin: 1800, ThroughputMax: 2000, P99: 88_000_000, DeltaPct: -50},
				{Rounds: 3, Throughput: 6700, ThroughputMin: 6500, ThroughputMax: 6900, P99: 3_000_000, DeltaPct: -40.2}}},
		}}, Unit: "tps", Runs: []Run{sampleRun()}}
}
