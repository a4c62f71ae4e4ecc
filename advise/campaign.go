package advise

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Campaign is a campaign file that measures a finding's suggestion
// against what is in force now, so the rule of thumb is checked on this
// machine before anyone applies it (`writepath campaign run FILE`).
type Campaign struct {
	// File is the suggested file name ("advise-nvme-scheduler.yaml").
	File string `json:"file"`
	// Run is the command that runs it on this host.
	Run string `json:"run"`
	// Spec is the campaign file's text.
	Spec string `json:"spec"`
}

// fioValidationJob is FIELD.md's job for validating a storage change,
// with files small enough for a data disk's spare space.
const fioValidationJob = "[--name=advise, --ioengine=libaio, --iodepth=32, --rw=randwrite, --bs=4k, --size=1G, --numjobs=4, " +
	"--runtime=60, --time_based, --group_reporting, --direct=1, --fsync=4]"

// schedulerCampaign measures the NVMe device d with its scheduler as
// found and with none, as a host knob each run sets and restores.
func schedulerCampaign(d Disk) *Campaign {
	name := "advise-nvme-scheduler"
	dir := scratchDir(d.Dir, "writepath-advise")
	c := &Campaign{File: name + ".yaml",
		Run: fmt.Sprintf("writepath campaign run %s.yaml --data-dir %s --allow-host scheduler   # as root", name, dir)}
	c.Spec = fmt.Sprintf(`# writepath advise, rule nvme-scheduler: %s is NVMe and uses %s.
# The field's fio validation job in %s (on %s) with the scheduler as
# found and with none; each run sets it, records it read back, and puts
# it back afterwards.
#   %s
name: %s
workload: fio
options: %s
matrix:
  host.scheduler: [%s, none]
rounds: 3
window: 10s-60s
baseline: host.scheduler=%s
`, d.Info.Disk, d.Info.Scheduler, dir, d.Info.Disk, c.Run, name, fioValidationJob, d.Info.Scheduler, d.Info.Scheduler)
	return c
}

// simpleSetting matches a suggestion that is one server variable.
var simpleSetting = regexp.MustCompile(`^(innodb_[a-z_]+)=([A-Za-z0-9_]+)$`)

// settingCampaign measures a suggested server setting against the value
// in force: oltp_write_only on a managed server of the same binary in a
// directory beside the datadir (same disk), one cell per value. Only for
// suggestions that are a single variable.
func settingCampaign(f *Facts, fd Finding) *Campaign {
	m := simpleSetting.FindStringSubmatch(fd.Suggest)
	if m == nil || f.DataDir == "" {
		return nil
	}
	variable, suggested := m[1], m[2]
	current, ok := f.Vars.Str(variable)
	if !ok || current == suggested || !simpleSetting.MatchString(variable+"="+current) {
		return nil
	}
	name := "advise-" + fd.Rule
	dir := scratchDir(f.DataDir, "writepath-advise-mysql")
	c := &Campaign{File: name + ".yaml", Run: fmt.Sprintf("writepath campaign run %s.yaml", name)}
	c.Spec = fmt.Sprintf(`# writepath advise, rule %s: %s
# sysbench oltp_write_only on a managed server in %s (beside the datadir,
# on the same disk) with %s as found (%s) and as suggested (%s).
#   %s
name: %s
workload: oltp
options: [--tables=16, --table-size=100000, --threads=16, --time=120, --mysqld-dir=%s]
matrix:
  %s: [%s, %s]
rounds: 3
window: 30s-120s
baseline: %s=%s
`, fd.Rule, oneLine(fd.Problem), dir, variable, current, suggested, c.Run, name, dir, variable,
		strconv.Quote(current), strconv.Quote(suggested), variable, current)
	return c
}

// attachCampaigns gives each finding that can be measured its campaign.
func attachCampaigns(f *Facts, fs []Finding) {
	for i := range fs {
		if fs[i].Campaign == nil {
			fs[i].Campaign = settingCampaign(f, fs[i])
		}
	}
}

// scratchDir is a directory beside dir (on its filesystem) for a
// campaign's files, never dir itself: the datadir is the server's.
func scratchDir(dir, name string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dir)), name)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
