package fio

import (
	"fmt"
	"strings"
)

// fio 3.33's type lines (parse.c's typehelp), as --cmdhelp prints them.
const (
	typeStr       = "string (opt=bla)"
	typeMulti     = "string with possible k/m/g postfix (opt=4k)"
	typeTime      = "string with time postfix (opt=10s)"
	typeRange     = "one to three ranges (opt=1k-4k[,4k-8k[,1k-8k]])"
	typeInt       = "integer value (opt=100)"
	typeBool      = "boolean value (opt=1)"
	typeFloatList = "list of floating point values separated by ':' (opt=5.9:7.8)"
	typeStrSet    = "empty or boolean value ([0|1])"
)

// cmdHelp is one option's --cmdhelp: what fio 3.33 prints for it, so that
// scripts reading the type/default/range/valid values lines read the same.
type cmdHelp struct {
	opt    string // writepath's name (optionTable); "": refused when run
	name   string // fio's name: it may be writepath's alias (ba, iodepth_batch)
	help   string
	alias  string
	typ    string
	def    string // "" prints "no default"
	rng    string
	values []helpValue
	depth  int // indentation under its parent in --cmdhelp=all; -1: fio lists it under --enghelp only
}

type helpValue struct{ val, help string }

// engineOnlyHelp are the table's options that fio 3.33 knows as engine
// options (fio --enghelp=ENGINE,OPT); writepath takes them as job options.
var engineOnlyHelp = map[string]string{
	"cmdprio_percentage": "libaio", "cmdprio_class": "libaio", "cmdprio": "libaio", "cmdprio_bssplit": "libaio",
}

// cmdHelpNotes are where writepath's option does not do what fio's help
// says: printed as a "writepath" line after fio's fields.
var cmdHelpNotes = map[string]string{
	"zonemode":              "zbd is refused when run",
	"thread":                "writepath always runs jobs as threads",
	"random_generator":      "writepath draws with PCG; with lfsr every block is visited once per loop, norandommap or not, as fio's LFSR does",
	"experimental_verify":   "writepath checks the blocks it recorded writing either way: the same blocks are read back and the same failures caught",
	"gtod_reduce":           "no latencies, bandwidth samples or percentiles in the report; writepath still times each I/O for the fabric's intervals",
	"replay_redirect":       "the target is a file or a device",
	"cmdprio_percentage":    "fio: a libaio/io_uring engine option (fio --enghelp=libaio); a job option here",
	"cmdprio_class":         "fio: a libaio/io_uring engine option (fio --enghelp=libaio); a job option here",
	"cmdprio":               "fio: a libaio/io_uring engine option (fio --enghelp=libaio); a job option here",
	"cmdprio_bssplit":       "fio: a libaio/io_uring engine option (fio --enghelp=libaio); a job option here",
	"buffer_compress_chunk": "unset, the whole buffer is one region",
}

var cmdHelpByOpt = func() map[string]*cmdHelp {
	m := make(map[string]*cmdHelp, len(cmdHelpTable))
	for i := range cmdHelpTable {
		if h := &cmdHelpTable[i]; h.opt != "" {
			m[h.opt] = h
		}
	}
	return m
}()

// optionDefaults are fio 3.33's defaults of the supported options that
// have one, from cmdHelpTable. TestOptionDefaults checks that giving each
// to this package's parser leaves a default job unchanged. An option whose
// default here is not fio's is in defaultDiffers instead.
var optionDefaults = func() map[string]string {
	m := map[string]string{}
	for _, h := range cmdHelpTable {
		if _, differs := defaultDiffers[h.opt]; h.opt != "" && h.def != "" && !differs {
			m[h.opt] = h.def
		}
	}
	return m
}()

// writeCmdHelpAll is fio's --cmdhelp=all: each option's name (indented
// under its parent) and help, fio's list whole: --parse-only accepts them
// all, and --cmdhelp=OPT says which are refused when run.
func writeCmdHelpAll(b *strings.Builder) {
	for _, h := range cmdHelpTable {
		if h.depth < 0 {
			continue
		}
		fmt.Fprintf(b, "%-24s: %s\n", strings.Repeat("  ", h.depth)+h.name, h.help)
	}
}

// writeOptionHelp is fio's show_option_help for one option.
func writeOptionHelp(b *strings.Builder, h *cmdHelp) {
	fmt.Fprintf(b, "%20s: %s\n", h.name, h.help)
	if h.alias != "" {
		fmt.Fprintf(b, "%20s: %s\n", "alias", h.alias)
	}
	fmt.Fprintf(b, "%20s: %s\n", "type", h.typ)
	def := h.def
	if def == "" {
		def = "no default"
	}
	fmt.Fprintf(b, "%20s: %s\n", "default", def)
	if h.rng != "" {
		fmt.Fprintf(b, "%20s: %s\n", "range", h.rng)
	}
	for i, v := range h.values {
		k := ""
		if i == 0 {
			k = "valid values"
		}
		fmt.Fprintf(b, "%20s: %-10s", k, v.val)
		if v.help != "" {
			fmt.Fprintf(b, " %s", v.help)
		}
		b.WriteByte('\n')
	}
	if h.opt == "" {
		fmt.Fprintf(b, "%20s: refused when run: %s\n", "writepath", reasonFor(h.name))
	} else if n := cmdHelpNotes[h.opt]; n != "" {
		fmt.Fprintf(b, "%20s: %s\n", "writepath", n)
	}
	b.WriteByte('\n')
}
