package fabrictest_test

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/fabrictest"
)

// childEnv, when set to "ADDR DBPATH", makes the test binary a bare
// coordinator process (for tests that kill it with SIGKILL).
const childEnv = "FABRICTEST_COORDINATOR_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		var addr, db string
		fmt.Sscan(v, &addr, &db)
		if err := serveCoordinator(addr, db); err != nil {
			fmt.Fprintln(os.Stderr, "child coordinator:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveCoordinator runs a coordinator on addr with its store at db until
// the process is killed.
func serveCoordinator(addr, db string) error {
	st, err := store.Open(db)
	if err != nil {
		return err
	}
	c, err := coordinator.New(fabrictest.FastCoordinator(), st)
	if err != nil {
		return err
	}
	lis, err := listenRetry(addr)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	c.Register(s)
	fmt.Println("serving")
	return s.Serve(lis)
}

// listenRetry listens on addr, retrying while a killed predecessor's socket
// is still being torn down.
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var lis net.Listener
		if lis, err = net.Listen("tcp", addr); err == nil {
			return lis, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, err
}
