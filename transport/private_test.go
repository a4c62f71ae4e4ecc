package transport

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// childEnv makes the test binary a client of a private socket instead of
// running the tests: "target token".
const childEnv = "TRANSPORT_TEST_PRIVATE_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		target, token, _ := strings.Cut(v, " ")
		err := call(target, 1, Client{Token: token}.DialOptions()...)
		fmt.Printf("code=%v err=%v\n", status.Code(err), err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPrivateOnlyThisProcess serves on a private socket: this process with
// the token is served; this process without it is refused; another process
// — even one handed the token — is closed at accept; the socket's
// directory is 0700 and goes away on Close.
func TestPrivateOnlyThisProcess(t *testing.T) {
	logged := &captureLog{}
	p, err := ListenPrivate(slog.New(logged))
	if err != nil {
		t.Fatal(err)
	}
	serveEcho(t, p.Listener(), p.ServerOptions()...)
	st, err := os.Stat(p.dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %s: mode %v, %v; want 0700", p.dir, st.Mode(), err)
	}
	if err := call(p.Target(), 1, p.DialOptions()...); err != nil {
		t.Fatalf("this process with the token: %v", err)
	}
	noToken := grpc.WithTransportCredentials(insecure.NewCredentials())
	if err := call(p.Target(), 1, noToken); status.Code(err) != codes.Unauthenticated {
		t.Errorf("this process without the token: %v; want Unauthenticated", err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+p.Target()+" "+p.token)
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "code=Unavailable") {
		t.Errorf("another process with the token: %s (%v); want code=Unavailable (closed at accept)", out, err)
	}
	if l := logged.lines(); len(l) != 1 || !strings.Contains(l[0], "is not this process") {
		t.Errorf("log = %q; want one refusal naming the other process", l)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
		t.Errorf("after Close, %s: %v; want it removed", p.dir, err)
	}
}

// TestPrivateLimits: the embedded fabric has the real coordinator's
// message limits, not gRPC's 4 MiB default.
func TestPrivateLimits(t *testing.T) {
	p, err := ListenPrivate(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	serveEcho(t, p.Listener(), p.ServerOptions()...)
	if err := call(p.Target(), 8<<20, p.DialOptions()...); err != nil {
		t.Errorf("an 8 MiB reply (over gRPC's 4 MiB default): %v", err)
	}
	// A request over the server's limit, from a client that lifted its own.
	big := append(p.DialOptions(), grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err := callWith(p.Target(), make([]byte, ServerRecvLimit+1), big...); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a request over ServerRecvLimit: %v; want ResourceExhausted", err)
	}
}
