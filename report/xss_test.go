package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
)

// hostile is markup that runs script wherever a string becomes HTML: each
// sets data-pwned on <html> if it runs.
var hostile = []string{
	`<img src=x onerror="document.documentElement.setAttribute('data-pwned','img')">`,
	`</script><script>document.documentElement.setAttribute('data-pwned','script')</script>`,
	`"><svg onload="document.documentElement.setAttribute('data-pwned','svg')">`,
	`<iframe srcdoc="<script>parent.document.documentElement.setAttribute('data-pwned','iframe')</script>">`,
}

func h(i int) string { return hostile[i%len(hostile)] }

// hostileCampaign puts a hostile string in every string a user, a job
// author or a worker controls: campaign, group, cell, op, worker, device,
// knob and series names, the title and the notes.
func hostileCampaign() Campaign {
	r := sampleRun()
	r.Title, r.Kind, r.State = h(0), h(1), h(2)
	r.Ops[0].Name = h(3)
	r.Workers[0].Name, r.Workers[1].Name = h(0), h(1)
	r.Devices[0].Name, r.Devices[0].Unit = h(2), h(3)
	r.InnoDB[0].Name = h(0)
	r.Notes = []string{h(1), h(2)}
	r.Host = []HostRow{{Worker: h(0), Knob: h(1), Target: h(2), Before: h(3), Set: h(0), Read: h(1)}}
	r.Evidence = []EvidenceRow{{Name: h(2), Unit: "ms", Count: 3, P50: 1, P99: 2, P999: 3, Max: 4}}
	r.Block = []Series{{Name: h(3), T: []float64{1, 2}, Values: []float64{1, 2}}}
	c := sampleCampaign()
	c.Table.Campaign = h(0)
	c.Table.Groups = []string{h(1), h(2)}
	c.Table.Rows[0].Label, c.Table.Rows[1].Label = h(3), h(0)
	c.Table.Rows[1].Host = h(1)
	c.Table.Baseline = h(3)
	c.Unit = h(2)
	c.Runs = []Run{r}
	return c
}

// showTips is appended to the page by the test: it opens every chart's
// tooltip on each point (ECharts draws tooltips as HTML) and then marks the
// page, so the dump shows the tooltips were drawn.
const showTips = `<script>
(function () {
  document.querySelectorAll("[data-chart]").forEach(function (d) {
    var c = echarts.getInstanceByDom(d);
    var n = c.getOption().series.length;
    for (var s = 0; s < n; s++) for (var i = 0; i < 3; i++) c.dispatchAction({type: "showTip", seriesIndex: s, dataIndex: i});
  });
  setTimeout(function () { document.documentElement.setAttribute("data-tips", "shown"); }, 500);
})();
</script>`

// TestHostileStringsRunNoScript renders a campaign report whose every user
// string is markup in headless Chromium, opens the charts' tooltips, and
// checks that no script ran and the strings show as text.
func TestHostileStringsRunNoScript(t *testing.T) {
	chromium := testenv.Chromium(t)
	var b bytes.Buffer
	if err := WriteCampaignHTML(&b, hostileCampaign()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	end := strings.LastIndex(html, "</body>") // the page's own, not one in the embedded library
	page := html[:end] + showTips + "\n" + html[end:]
	path := filepath.Join(t.ArtifactDir(), "hostile.html")
	if err := os.WriteFile(path, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	dom := headless(t, chromium, path, "--dump-dom")
	if !strings.Contains(dom, `data-tips="shown"`) {
		t.Fatal("the tooltips were not opened: the page's script failed")
	}
	if m := regexp.MustCompile(`<html[^>]*data-pwned="([a-z]+)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("a hostile string ran as script (the %s payload)", m[1])
	}
	// Shown as text: the table header carries a group name, escaped.
	if !strings.Contains(dom, "&lt;img src=x onerror=") {
		t.Error("the hostile strings are not shown as text")
	}
	var cells int
	for _, r := range hostileCampaign().Table.Rows {
		if strings.Contains(dom, strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(r.Label)) {
			cells++
		}
	}
	if cells == 0 {
		t.Error("no cell label shown")
	}
}
