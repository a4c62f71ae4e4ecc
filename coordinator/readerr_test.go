package coordinator

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/writepath/writepath/coordinator/store"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// serveControl serves c's ControlService over bufconn and returns a client.
func serveControl(t *testing.T, c *Coordinator) writepathv1.ControlServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	c.Register(srv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return writepathv1.NewControlServiceClient(conn)
}

// readCalls are the ControlService's read RPCs on one run id, each
// returning its error (streams read to their end).
func readCalls(ctl writepathv1.ControlServiceClient, id string) map[string]func(context.Context) error {
	drain := func(recv func() error) error {
		for {
			if err := recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	return map[string]func(context.Context) error{
		"GetRun": func(ctx context.Context) error {
			_, err := ctl.GetRun(ctx, &writepathv1.GetRunRequest{RunId: id})
			return err
		},
		"ReadRun": func(ctx context.Context) error {
			s, err := ctl.ReadRun(ctx, &writepathv1.ReadRunRequest{RunId: id, Intervals: true,
				Workers: writepathv1.WorkerDetail_WORKER_DETAIL_TOTALS})
			if err != nil {
				return err
			}
			return drain(func() error { _, err := s.Recv(); return err })
		},
		"WatchRun": func(ctx context.Context) error {
			s, err := ctl.WatchRun(ctx, &writepathv1.WatchRunRequest{RunId: id})
			if err != nil {
				return err
			}
			return drain(func() error { _, err := s.Recv(); return err })
		},
		"CancelRun": func(ctx context.Context) error {
			_, err := ctl.CancelRun(ctx, &writepathv1.CancelRunRequest{RunId: id})
			return err
		},
	}
}

// TestReadErrorsKeepTheirCause: a read RPC says NotFound only for a run the
// store does not have; a record the store cannot decode is DataLoss with
// the store's message (the file named), and a closed store Unavailable —
// never "not found" for a run that is there.
func TestReadErrorsKeepTheirCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writepath.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	marker := strings.Repeat("damage-me-", 4)
	const id = "20260101-000000.000"
	if err := st.PutRun(&writepathv1.Run{Id: id, State: writepathv1.RunState_RUN_STATE_FINISHED, Reason: marker}); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Log: discard()}, st)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctl := serveControl(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	expect := func(what string, calls map[string]func(context.Context) error, want codes.Code, wantMsg ...string) {
		t.Helper()
		for name, call := range calls {
			err := call(ctx)
			if status.Code(err) != want {
				t.Errorf("%s: %s = %v; want code %v", what, name, err, want)
				continue
			}
			for _, m := range wantMsg {
				if !strings.Contains(status.Convert(err).Message(), m) {
					t.Errorf("%s: %s = %v; want a message with %q", what, name, err, m)
				}
			}
		}
	}
	expect("a stored run", map[string]func(context.Context) error{"GetRun": readCalls(ctl, id)["GetRun"]}, codes.OK)
	expect("a missing run", readCalls(ctl, "20990101-000000.000"), codes.NotFound, "run not found")

	damage(t, path, []byte(marker))
	expect("a damaged record", readCalls(ctl, id), codes.DataLoss, path, "damaged")
	list := func(ctx context.Context) error {
		_, err := ctl.ListRuns(ctx, &writepathv1.ListRunsRequest{})
		return err
	}
	expect("a damaged record", map[string]func(context.Context) error{"ListRuns": list}, codes.DataLoss, path)

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	expect("a closed store", readCalls(ctl, id), codes.Unavailable)
}

// damage overwrites every copy of marker in the file at path with bytes
// that are not UTF-8, as a bad disk would: the value still parses as a
// protobuf field but no longer decodes as a string. bbolt maps the file
// shared, so the open store reads the damage.
func damage(t *testing.T, path string, marker []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], marker)
		if i < 0 {
			break
		}
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, len(marker)), int64(off+i)); err != nil {
			t.Fatal(err)
		}
		off += i + len(marker)
		n++
	}
	if n == 0 {
		t.Fatalf("damage %s: %q is not in the file", path, marker)
	}
}
