package oltp

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

var randTypes = map[string]oltpv1.RandType{
	"uniform": oltpv1.RandType_RAND_TYPE_UNIFORM, "gaussian": oltpv1.RandType_RAND_TYPE_GAUSSIAN,
	"special": oltpv1.RandType_RAND_TYPE_SPECIAL, "pareto": oltpv1.RandType_RAND_TYPE_PARETO,
}

// textOnly are the options that change only what `writepath sysbench`
// prints; a spec (run oltp, campaigns, the crash load) has no text.
var textOnly = map[string]bool{
	"verbosity": true, "histogram": true, "debug": true, "validate": true, "help": true,
	"version": true, "config_file": true, "db_debug": true, "report_checkpoints": true,
}

// ParseArgs parses sysbench oltp_write_only options ("--tables=8",
// "--skip-trx", "--auto_inc=off", and also "--threads 16") into a Spec,
// reporting every problem at once: the spec of `writepath run oltp`, of a
// campaign cell, of the crash kind's load. A leading "oltp_write_only"
// (sysbench's test name) is accepted. Options and their meaning are those
// of ParseCommandLine; options that change only sysbench's text are
// refused here, naming `writepath sysbench`.
func ParseArgs(args []string) (*oltpv1.Spec, error) {
	for i, a := range args {
		if !utf8.ValidString(a) {
			// Every value ends up in a protobuf string, which must be UTF-8.
			return nil, fmt.Errorf("argument %d (%q) is not valid UTF-8", i+1, a)
		}
	}
	vs := newValues()
	var errs []error
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i == 0 && IsWriteOnly(a) {
			continue
		}
		name, val := splitOpt(a)
		if !strings.HasPrefix(a, "--") || name == "" {
			errs = append(errs, fmt.Errorf("argument %q: want --option=value (see writepath sysbench oltp_write_only help)", a))
			continue
		}
		key := canon(strings.ToLower(name))
		opt, ok := optIndex[key]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("invalid option: %s%s", a, suggest(key)))
			continue
		case textOnly[key]:
			errs = append(errs, fmt.Errorf("--%s changes only the text sysbench prints; use writepath sysbench oltp_write_only [options] COMMAND", name))
			continue
		}
		if val == nil && opt.typ != tBool && opt.typ != tFile {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				errs = append(errs, fmt.Errorf("option --%s needs a value", name))
				continue
			}
			i++
			val = &args[i]
		}
		if err := vs.set(opt, val); err != nil {
			errs = append(errs, fmt.Errorf("invalid option: --%s=%s (want on or off)", name, *val))
		}
	}
	aliases(vs)
	spec, specErrs := specFrom(vs)
	if err := errors.Join(append(errs, specErrs...)...); err != nil {
		return nil, err
	}
	spec.RandSeed = seedOf(spec.RandSeed)
	if _, err := Resolve(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// aliases applies sysbench's deprecated spellings: --num-threads (when
// above 1), --max-requests, --max-time and --tx-rate (when above 0).
func aliases(vs *values) {
	for _, d := range []struct{ old, now string }{{"num-threads", "threads"}, {"max-requests", "events"}, {"max-time", "time"}, {"tx-rate", "rate"}} {
		if n, err := vs.integer(d.old); err == nil && n > 0 && (d.old != "num-threads" || n > 1) {
			v, _ := vs.str(d.old)
			_ = vs.set(optIndex[canon(d.now)], &v)
		}
	}
}

// seedOf stands in for sysbench's --rand-seed=0 ("use the clock"). A spec
// is deterministic from its seed, so the seed is chosen once, here, and
// travels in the spec: every worker and a later re-run with --rand-seed=N
// draw the same streams, while two command-line runs differ, as two
// sysbench runs do. (A fixed default would replay the same (id, c) pairs
// run after run, and an UPDATE that writes the value a row already holds
// changes nothing: 0 affected rows, a different workload.)
func seedOf(seed uint64) uint64 {
	if seed != 0 {
		return seed
	}
	var b [8]byte
	if _, err := cryptorand.Read(b[:]); err == nil {
		if s := binary.LittleEndian.Uint64(b[:]); s != 0 {
			return s
		}
	}
	return uint64(time.Now().UnixNano()) | 1
}

// FromArgs is ParseArgs marshalled, for workload.Meta.
func FromArgs(args []string) ([]byte, error) {
	spec, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(spec)
}

// suggest names a close option for a typo, e.g. " (did you mean --tables?)".
func suggest(key string) string {
	var names []string
	for n, opt := range optIndex {
		if strings.HasPrefix(n, key) || strings.HasPrefix(key, n) || strings.Contains(n, key) || editDistance(n, key) <= 2 {
			names = append(names, "--"+opt.name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " (did you mean " + strings.Join(names, " or ") + "?)"
}

func connOf(s *oltpv1.Spec) *oltpv1.Connection {
	if s.Connection == nil {
		s.Connection = &oltpv1.Connection{}
	}
	return s.Connection
}

// editDistance is the Levenshtein distance of a and b (short names only).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
