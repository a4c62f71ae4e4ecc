package powerloss_test

import (
	"context"
	"fmt"
	"os"

	"github.com/writepath/writepath/powerloss"
)

// Example shows the crash harness's sequence: a prepared datadir becomes
// the backing directory, the server runs on the mount, the power is cut
// after kill -9, and the server restarts on the backing directory.
func Example() {
	ctx := context.Background()
	exe, _ := os.Executable() // the writepath binary: it has powerloss-serve
	m, err := powerloss.Mount(ctx, exe, "/var/lib/wp/datadir", "/var/lib/wp/mnt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close() // always unmounts, Ctrl-C and server crash included

	// Start mysqld with --datadir=m.Mountpoint() (socket and pid file
	// outside the mount), run the load, kill -9 it and wait for it to die.

	rep, err := m.Cut(ctx, powerloss.CutOptions{Torn: true}) // a seed is picked and reported
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("dropped %d bytes and %d namespace ops, kept %d torn bytes (seed %d)\n",
		rep.DroppedBytes, rep.DroppedOps, rep.KeptBytes, rep.Seed)

	// Restart mysqld with --datadir=m.Backing(): it now holds exactly what
	// survived the cut.
}
