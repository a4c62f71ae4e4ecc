package crash

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/powerloss"
)

// TestMain lets this test binary serve the power-loss layer. A power-loss
// round mounts it by running os.Executable() with powerloss.ServeCommand,
// exactly as the CLI runs the writepath binary; here that executable is
// the test binary, so it answers the subcommand itself. The tests thus
// need no built writepath binary (cmd/ is other people's work in
// progress) and exercise the very code path of the CLI.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == powerloss.ServeCommand {
		os.Exit(powerloss.ServeMain(os.Args[2:], os.Stderr))
	}
	// A -race serving process would sleep 1 s at exit, and every cut
	// waits for that exit. Children inherit it; this process read its own
	// GORACE at start-up already.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	code := m.Run()
	if powerDir != "" {
		os.RemoveAll(powerDir)
	}
	os.Exit(code)
}

// powerDir is one instance directory shared by the power-loss tests (they
// run one after another): its datadir is initialised and its snapshot
// prepared once, and every round restores that snapshot anyway.
var (
	powerDir     string
	powerDirOnce sync.Once
)

func sharedPowerDir(t *testing.T) string {
	t.Helper()
	testenv.MySQLServer(t)
	testenv.FUSE(t)
	powerDirOnce.Do(func() {
		d, err := os.MkdirTemp("", "wp-") // short: the socket path must fit 107 bytes
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o711) // the server's account must enter it
		powerDir = d
	})
	if powerDir == "" {
		t.Fatal("no shared instance directory")
	}
	return powerDir
}
