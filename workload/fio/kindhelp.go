package fio

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// optionDefaults are fio 3.33's defaults (as `fio --cmdhelp=OPT` prints
// them) of the supported options that have one. TestOptionDefaults checks
// each against the real fio and against this package's own defaultJob:
// giving the default changes nothing. An option whose default here is not
// fio's is in defaultDiffers instead.
var optionDefaults = map[string]string{
	"latency_percentile": "100", "latency_run": "0", "continue_on_error": "none", "fill_device": "0",
	"nrfiles": "1", "unlink": "0", "file_service_type": "roundrobin", "filename_format": "$jobname.$jobnum.$filenum",
	"create_on_open": "0", "unlink_each_loop": "0", "rw": "read", "rwmixread": "50", "rwmixwrite": "50", "bs": "4096",
	"offset": "0", "number_ios": "0", "numjobs": "1", "ioengine": "psync", "iodepth": "1",
	"iodepth_batch_submit": "1", "iodepth_batch_complete_min": "1", "direct": "0", "buffered": "1",
	"sync": "none", "fsync": "0", "fdatasync": "0", "end_fsync": "0", "fsync_on_close": "0",
	"invalidate": "1", "fallocate": "native", "overwrite": "0", "loops": "1", "runtime": "0",
	"startdelay": "0", "flow_id": "0", "flow": "0", "flow_sleep": "0", "io_submit_mode": "inline", "serialize_overlap": "0",
	"rate_process": "linear", "randrepeat": "1", "randseed": "0x89", "random_generator": "tausworthe",
	"random_distribution": "random", "scramble_buffers": "1",
	"verify": "0", "do_verify": "1", "verify_fatal": "0", "verify_dump": "0", "log_avg_msec": "0",
	"log_hist_msec": "0", "log_hist_coarseness": "0", "log_max_value": "0", "log_offset": "0",
	"per_job_logs": "1", "log_prio": "0", "offset_increment": "0", "zonemode": "none", "zonesize": "0", "zonerange": "0", "zoneskip": "0", "exit_what": "group", "thinktime": "0", "thinktime_spin": "0", "thinktime_blocks": "1", "gtod_reduce": "0", "disable_lat": "0", "disable_clat": "0", "disable_slat": "0", "disable_bw_measurement": "0", "unified_rw_reporting": "none", "clat_percentiles": "1",
	"lat_percentiles": "0", "slat_percentiles": "0", "replay_no_stall": "0", "replay_time_scale": "100",
	"percentile_list": "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99",
}

// defaultDiffers are options whose unset value here is not fio's default,
// and what it is.
var defaultDiffers = map[string]string{
	"buffer_compress_chunk": "the whole buffer",
}

// Help prints the fio kind's options (`writepath run fio --help`): every
// job option the parser takes, from its table, with fio's description and
// default, then what is refused and why.
func Help(w io.Writer) error {
	var b strings.Builder
	b.WriteString("fio: fio 3.33's job options and job files, run on every selected worker at once.\n\n" +
		"Usage:\n" +
		"  writepath run fio [run] [job options] [job file...]   on the fabric: merged lines and summary\n" +
		"  writepath fio [fio flags] [job options] [job file...]  locally, as fio: --output-format, --cmdhelp=OPT,\n" +
		"                                                         --enghelp, --showcmd, --version\n\n" +
		"Options are fio's: --option=value or --option value; those before the first --name are global;\n" +
		"a job file takes the same names as fio's INI. Defaults in brackets are fio 3.33's.\n\n" +
		"Job options:\n")
	width := 0
	for _, o := range optionTable {
		width = max(width, len(optionUsage(o)))
	}
	for _, o := range optionTable {
		fmt.Fprintf(&b, "  %-*s  %s", width, optionUsage(o), o.help)
		if al := aliasesOf(o.name); len(al) > 0 {
			fmt.Fprintf(&b, " (alias %s)", strings.Join(al, ", "))
		}
		switch d, ok := optionDefaults[o.name]; {
		case notYet[o.name]:
			b.WriteString(" (accepted; refused when run: not built yet)")
		case ok:
			fmt.Fprintf(&b, " [%s]", d)
		case defaultDiffers[o.name] != "":
			fmt.Fprintf(&b, " [%s; fio: 512]", defaultDiffers[o.name])
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\nEngines: %s.\n", strings.Join(engineList(), ", "))
	names := make([]string, 0, len(refused))
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("\nAccepted by --parse-only as fio accepts them, refused when run, with the reason (an ignored\n" +
		"option would change what is measured); so are fio 3.33's other options, its other engines and\n" +
		"their options:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, "--"+n, refused[n])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// optionUsage is how the help names an option: --name=VALUE, or
// --name[=BOOL] for one that may be given alone.
func optionUsage(o namedOption) string {
	if o.flag {
		return "--" + o.name + "[=BOOL]"
	}
	return "--" + o.name + "=VALUE"
}

// aliasesOf lists the other names of option name, sorted.
func aliasesOf(name string) []string {
	var out []string
	for a, n := range aliases {
		if n == name {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}
