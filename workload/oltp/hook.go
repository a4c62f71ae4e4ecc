package oltp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/writepath/writepath/workload/oltp/wire"
)

// CommitHook adds one statement to every transaction of a Load's clients,
// after sysbench's statements and before COMMIT, and tells each client's
// callbacks the fate of every commit: the crash harness's durability
// ledger writes a row per transaction with it. A Load without a hook does
// nothing more per transaction than the run phase.
type CommitHook struct {
	// SQL is the statement, with 1 to maxHookArgs integer ? placeholders
	// and no other '?'. It is prepared on every connection, as sysbench's
	// statements are (sent as text where the server refuses).
	SQL string
	// Client returns the callbacks of client i (0-based). It is called
	// once per client before the load starts.
	Client func(i int) CommitCallbacks
}

// CommitCallbacks are one client's part of a CommitHook. They run on the
// client's own goroutine.
type CommitCallbacks struct {
	// Before fills the statement's arguments for this attempt (a retried
	// transaction is a new attempt).
	Before func(args []int64)
	// After reports the end of every attempt that Before began: acked
	// when the server acknowledged COMMIT (with --skip-trx: the hook's
	// statement). Otherwise the attempt failed with err; when err is a
	// connection error after COMMIT was sent, its fate is unknown.
	After func(acked bool, err error)
}

// maxHookArgs bounds the hook statement's placeholders.
const maxHookArgs = 4

// hookArgs counts and checks the placeholders of a hook's statement.
func hookArgs(sql string) (int, error) {
	n := strings.Count(sql, "?")
	if n < 1 || n > maxHookArgs {
		return 0, fmt.Errorf("commit hook %q: %d placeholders, want 1 to %d", sql, n, maxHookArgs)
	}
	return n, nil
}

// errNoHook is a CommitHook without its Client function.
var errNoHook = errors.New("commit hook without Client callbacks")

// hookRequest encodes the hook's statement with args for session ss:
// an execution of its prepared statement, or the text with the integers
// in place of the placeholders.
func hookRequest(dst []byte, ss *session, sql string, args []int64) ([]byte, error) {
	if ss.hook == 0 {
		b, rest := wire.Header(dst, wire.ComQuery), sql
		for _, a := range args { // len(args) placeholders: checked by hookArgs
			i := strings.IndexByte(rest, '?')
			b = strconv.AppendInt(append(b, rest[:i]...), a, 10)
			rest = rest[i+1:]
		}
		return wire.Finish(append(b, rest...))
	}
	var vals [maxHookArgs]wire.Value
	for i, a := range args {
		vals[i] = wire.Value{Int: a}
	}
	b := wire.AppendExecute(wire.Header(dst, wire.ComStmtExecute), ss.hook, vals[:len(args)], !ss.hookTyped)
	ss.hookTyped = true
	return wire.Finish(b)
}
