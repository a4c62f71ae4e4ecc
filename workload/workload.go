package workload

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/writepath/writepath/beneath"
)

// Workload runs the phases of one decoded spec.
type Workload interface {
	// Run executes phase on this worker's shard, recording latencies and
	// counters into rec. It returns when the phase is complete or ctx is done
	// (then within a second, with ctx.Err() or nil).
	Run(ctx context.Context, phase string, env Env, rec *Recorder) error
}

// Summarizer is implemented by kinds that produce a kind-specific summary of
// a phase (fio-shaped JSON, sysbench's sections). The worker ships it with
// the phase result without looking inside.
type Summarizer interface {
	Summary(phase string) ([]byte, error)
}

// Early is an optional second interface of a Workload that sets a phase up
// itself before the common start (oltp opens its connections and prepares
// its statements, as sysbench's threads do before their first event): the
// worker calls Run for such a phase as soon as it is told the start, up to
// the coordinator's start margin before env.Start, and Run records nothing
// before env.Start. Then the first interval measures the load, not the
// set-up. Phases for which Early is false are run at env.Start.
type Early interface {
	Early(phase string) bool
}

// SetUpper is an optional interface of a Workload whose set-up may take
// longer than the start margin (oltp's connections at many threads on a
// busy host): the worker calls SetUp when the phase is assigned and
// reports the phase ready once it returns, so the coordinator's common
// start waits for every worker's set-up, as sysbench starts its clock
// once its threads have connected. What SetUp opens is Run's; if the
// phase never runs, ctx ends and the workload releases it. An error
// refuses the phase.
type SetUpper interface {
	SetUp(ctx context.Context, phase string, env Env) error
}

// Shard is this worker's share of a phase: worker Index of Count.
type Shard struct{ Index, Count int }

// Env is what the worker hands a workload beside its spec.
type Env struct {
	Shard Shard
	// DataDir is the root for relative paths named by the spec.
	DataDir string
	// Start is the common wall-clock start of the phase on every worker.
	Start time.Time
	// Log receives progress and notes; never nil when passed by the worker.
	Log *slog.Logger
	// Progress, if not nil, is a terminal for progress bars (local runs).
	Progress io.Writer
	// Guard, if not nil, decides which paths, binaries and sizes the job may
	// use. The worker sets it from its --data-dir and --allow-* flags; local
	// runs started by the user leave it nil.
	Guard Guard
	// Version is the writepath release running the phase, for kinds whose
	// reports name their tool (fio's "fio version").
	Version string
}

// Guard is the worker's policy for host resources. Kinds call it for every
// path, binary, size and permission a spec names, before any I/O, and use
// what it returns: the path it checked is the path they open.
type Guard interface {
	// Path resolves path (relative to the data dir, symlinks and ".."
	// followed) and returns it, confined beneath a trusted root, if the job
	// may use it. Open, create and remove it through the returned Path.
	Path(path string) (beneath.Path, error)
	// Binary checks a server binary and returns the resolved path to
	// execute.
	Binary(path string) (string, error)
	// Space reports whether dir's filesystem has need bytes free.
	Space(dir string, need int64) error
	// Memory reports whether a job may hold need bytes of buffers.
	Memory(need int64) error
	// Allow reports whether the operator allowed name of kind p (a server
	// setting, a privileged action, a database endpoint).
	Allow(p Permission, name string) error
}

// Permission is a kind of operator opt-in checked by Guard.Allow.
type Permission int

// The permissions a spec may need.
const (
	// Setting is a server setting that loads code, runs SQL, reads or
	// writes arbitrary files or weakens access (plugin_load, init_file...),
	// named as the server spells it.
	Setting Permission = iota + 1
	// Privileged is a host-wide action ("drop-caches", "power-loss").
	Privileged
	// Endpoint is a database server the job connects to: "host:port" over
	// TCP or the absolute path of a Unix socket.
	Endpoint
)

func (p Permission) String() string {
	switch p {
	case Setting:
		return "setting"
	case Privileged:
		return "privileged action"
	case Endpoint:
		return "database endpoint"
	}
	return fmt.Sprintf("Permission(%d)", int(p))
}

// Checker is an optional second interface of a Workload whose spec names
// host resources (files, directories, server binaries, sizes). Check
// passes each through env's Guard without doing any I/O of its own, so
// that a worker refuses a job over its limits when the spec is validated
// or assigned, before anything starts.
type Checker interface {
	Check(env Env) error
}

// Needs is what a spec asks of its host, as the spec names it: the
// embedded fabric builds its workers' guard from the Needs of the specs
// its own command line built, and nothing else.
type Needs struct {
	// Paths are files and directories (relative ones under the data dir).
	Paths []string
	// Binaries are server executables; "" is the default one.
	Binaries []string
	// Privileged are host-wide actions ("drop-caches", "power-loss").
	Privileged []string
	// Endpoints are database servers: "host:port" or a socket path.
	Endpoints []string
}

// Needer is an optional interface of a Workload that reports its Needs.
type Needer interface {
	Needs(env Env) Needs
}

// Path resolves a path named by a spec: through the Guard when there is
// one, else relative to DataDir, unconfined.
func (e Env) Path(p string) (beneath.Path, error) {
	if e.Guard != nil {
		return e.Guard.Path(p)
	}
	if filepath.IsAbs(p) || e.DataDir == "" {
		return beneath.Unconfined(p), nil
	}
	return beneath.Unconfined(filepath.Join(e.DataDir, p)), nil
}

// Binary checks a server binary through the Guard, if any, and returns
// the path to execute.
func (e Env) Binary(p string) (string, error) {
	if e.Guard != nil {
		return e.Guard.Binary(p)
	}
	return p, nil
}

// Space checks free space through the Guard, if any.
func (e Env) Space(dir string, need int64) error {
	if e.Guard != nil {
		return e.Guard.Space(dir, need)
	}
	return nil
}

// Memory checks a job's buffer memory through the Guard, if any.
func (e Env) Memory(need int64) error {
	if e.Guard != nil {
		return e.Guard.Memory(need)
	}
	return nil
}

// Allow checks an opt-in through the Guard; without one (a local run the
// user started) everything is allowed.
func (e Env) Allow(p Permission, name string) error {
	if e.Guard != nil {
		return e.Guard.Allow(p, name)
	}
	return nil
}

// Logger returns env.Log, or a logger that discards when it is nil.
func (e Env) Logger() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// Placement says on how many workers a phase runs.
type Placement int

const (
	// One runs the phase on a single worker (the first selected).
	One Placement = iota + 1
	// All runs the phase on every selected worker.
	All
)

func (p Placement) String() string {
	switch p {
	case One:
		return "one"
	case All:
		return "all"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Phase is a step of a kind's run.
type Phase struct {
	Name      string
	Placement Placement
	// Measured phases stream latency intervals; others (prepare, cleanup)
	// only report progress and a result.
	Measured bool
	// OnRequest phases run only when a run names them (oltp's prewarm); a
	// run that names no phase runs every other one, in order.
	OnRequest bool
}

// Meta describes a kind. Everything but New and FromArgs is data, so that a
// worker can advertise it and a coordinator can plan from it.
type Meta struct {
	// Name is the short name used on the command line ("fio", "oltp").
	Name string
	// Kind is the type URL of the kind's spec message, e.g.
	// "type.googleapis.com/writepath.fio.v1.Spec".
	Kind string
	// Description is one line for help output.
	Description string
	// Phases in the order a full run executes them.
	Phases []Phase
	// New decodes and validates a marshalled spec, reporting every problem
	// at once (errors.Join).
	New func(spec []byte) (Workload, error)
	// FromArgs builds a marshalled spec from command-line arguments in the
	// kind's native syntax (fio options, sysbench options).
	FromArgs func(args []string) ([]byte, error)
	// Help, if set, prints the options FromArgs takes, with their defaults
	// and descriptions, generated from the table the parser uses.
	Help func(w io.Writer) error
	// Output, if set, returns the printer of a run's result in the kind's
	// own output format when the marshalled spec asks for one (fio's
	// --output-format), or nil: `writepath run` then prints that on stdout
	// instead of writepath's summary.
	Output func(spec []byte) OutputFunc
	// Figures, if set, reads a worker's summary of the measured phase
	// (the Summarizer's output) into the figures a campaign table
	// aggregates beside throughput and latency, keyed as campaign names
	// them (campaign.FigRecoveryMS, ...): several samples where the run
	// repeats something itself (a crash run's rounds).
	Figures func(summary []byte) (map[string][]float64, error)
	// Local, if set, prepares what the kind needs to run on an embedded
	// fabric (no --coordinator) before its spec is built from args (oltp:
	// a sandbox server when no option names one). It returns the
	// arguments to build the spec from and a cleanup the caller runs
	// however the run ends.
	Local func(ctx context.Context, args []string, out io.Writer) (newArgs []string, cleanup func(), err error)
	// FrontEnd, if set, is the command of the tool the kind reimplements,
	// which takes the kind's arguments in that tool's own order and prints
	// as the tool does (oltp: sysbench's `oltp_write_only [options]
	// COMMAND`): `writepath run` hands it arguments in that order, to run
	// over the fabric, and leaves a --help among them to it.
	FrontEnd *FrontEnd
	// Timeline, if set, reads a worker's summary of the measured phase
	// into the timelines a report draws, one per repetition the run makes
	// itself (a crash run's restart, round by round).
	Timeline func(summary []byte) ([]TimelineRound, error)
	// Text, if set, is a worker's summary of the measured phase as the
	// kind's own text (a crash run's rounds: recovery, ledger verdict),
	// for commands that print more of a campaign's runs than its table
	// (the quickstart).
	Text func(summary []byte) (string, error)
	// Secrets are the kind's options whose values must never be stored
	// with a run (oltp's --mysql-password): commands refuse them towards a
	// coordinator and in campaign files, and on an embedded fabric pass
	// the value in a private file named by the option's File twin.
	Secrets []Secret
	// Tables says how the fabric's lines, summaries and campaign tables
	// show the kind's runs; the zero value shows I/O operations with
	// the default campaign columns.
	Tables Tables
}

// Tables is how a kind's runs read, as data: the readers (client,
// report) link no kind, so the command hands them this from the kind's
// Meta.
type Tables struct {
	// Txn says the kind's primary operation is a transaction ("trx"):
	// lines, summaries and comparisons count transactions per second and
	// show sysbench's p95 beside p99, not ops/s and MB/s.
	Txn bool
	// Unit is the throughput unit of its campaign tables ("iops");
	// "" is "tps".
	Unit string
	// Columns are its campaign table's columns per group, by the names
	// report gives them (report.KindColumns: "throughput", "MB/s",
	// "p95", "p99", "fsync p99", "dev p99", "delta", crash's figures);
	// nil is throughput, p99, dev p99 and delta.
	Columns []string
}

// Secret is an option carrying a secret and its twin naming a file that
// holds it, both without their dashes ("mysql-password",
// "mysql-password-file"); '-' and '_' are the same within a name, as in
// sysbench's options.
type Secret struct {
	Option, File string
	// What is what the value is, for messages ("password").
	What string
}

// FrontEnd names the command that runs a kind's arguments in the order,
// and with the output, of the tool the kind reimplements.
type FrontEnd struct {
	// Name is the command, as `writepath NAME` names it ("sysbench").
	Name string
	// Takes reports whether args are in that tool's order (oltp: a
	// sysbench test name among them).
	Takes func(args []string) bool
}

// TimelineRound is one repetition's moments in order (a crash round's
// kill, process start, recovery start, redo applied, ready, first
// commit), each as milliseconds after the first; moments never reached
// are left out.
type TimelineRound struct {
	Round  int
	Points []TimelinePoint
}

// TimelinePoint is one named moment of a TimelineRound.
type TimelinePoint struct {
	Name string
	Ms   float64
}

// OutputFunc prints the result of a run's measured phase from what each
// of its workers reported at the end of it.
type OutputFunc func(w io.Writer, parts []Part) error

// Part is one worker's end of a phase, as the coordinator stored it.
type Part struct {
	Worker string
	// Summary is the kind's Summarizer output; empty if the worker sent
	// none (it failed or was lost first).
	Summary []byte
	Err     string
}

// Phase returns the named phase.
func (m Meta) Phase(name string) (Phase, bool) {
	for _, p := range m.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

// registry holds the kinds linked into this binary. It is written only by
// Register during package initialisation and read afterwards.
var registry = struct {
	sync.RWMutex
	byKind map[string]Meta
	byName map[string]string
}{byKind: map[string]Meta{}, byName: map[string]string{}}

// Register adds a kind. It is meant for init functions: a duplicate or
// incomplete Meta is a programming error and panics.
func Register(m Meta) {
	if m.Name == "" || m.Kind == "" || m.New == nil || len(m.Phases) == 0 {
		panic(fmt.Sprintf("workload: incomplete Meta for %q", m.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byKind[m.Kind]; dup {
		panic("workload: kind registered twice: " + m.Kind)
	}
	if _, dup := registry.byName[m.Name]; dup {
		panic("workload: name registered twice: " + m.Name)
	}
	registry.byKind[m.Kind] = m
	registry.byName[m.Name] = m.Kind
}

// Lookup finds a kind by spec type URL.
func Lookup(kind string) (Meta, bool) {
	registry.RLock()
	defer registry.RUnlock()
	m, ok := registry.byKind[kind]
	return m, ok
}

// ByName finds a kind by its short name.
func ByName(name string) (Meta, bool) {
	registry.RLock()
	defer registry.RUnlock()
	m, ok := registry.byKind[registry.byName[name]]
	return m, ok
}

// Kinds returns every registered kind, sorted by name.
func Kinds() []Meta {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Meta, 0, len(registry.byKind))
	for _, m := range registry.byKind {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
