package transport

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoopbackOnlyRefusesOtherHosts serves plaintext in one network
// namespace and connects from a second one over a veth pair: a real
// non-loopback peer, refused and logged once however many times it tries.
// Loopback in the server's namespace is still admitted.
func TestLoopbackOnlyRefusesOtherHosts(t *testing.T) {
	srvNS, cliNS := netnsPair(t)
	var l net.Listener
	inNetns(t, srvNS, func() {
		var err error
		l, err = net.Listen("tcp", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
	})
	logged := &captureLog{}
	guarded := Server{Log: slog.New(logged)}.Wrap(l)
	defer guarded.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := guarded.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	inNetns(t, cliNS, func() {
		for range 20 {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("10.79.0.1:%d", port), 3*time.Second)
			if err != nil {
				t.Fatalf("dial from the other namespace: %v", err)
			}
			c.Close()
		}
	})
	inNetns(t, srvNS, func() {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 3*time.Second)
		if err != nil {
			t.Fatalf("dial loopback: %v", err)
		}
		defer c.Close()
	})
	select {
	case c := <-accepted:
		if !strings.HasPrefix(c.RemoteAddr().String(), "127.0.0.1:") {
			t.Fatalf("accepted a plaintext connection from %v", c.RemoteAddr())
		}
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("loopback connection was not accepted")
	}
	// The loopback connection came after the 20 refused ones on the same
	// accept loop, so all of them were refused by now.
	if lines := logged.lines(); len(lines) != 1 || !strings.Contains(lines[0], "refused plaintext connection") ||
		!strings.Contains(lines[0], "10.79.0.2") {
		t.Errorf("log after 20 refused connections = %q; want one line naming 10.79.0.2 (rate-limited)", lines)
	}
}

// netnsPair creates two namespaces joined by a veth pair, 10.79.0.1 and
// 10.79.0.2, and removes them when the test ends.
func netnsPair(t *testing.T) (string, string) {
	t.Helper()
	id := os.Getpid() % 100000
	a, b := fmt.Sprintf("wptr%da", id), fmt.Sprintf("wptr%db", id)
	va, vb := fmt.Sprintf("wpta%d", id), fmt.Sprintf("wptb%d", id)
	run := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", a).Run()
		exec.Command("ip", "netns", "del", b).Run()
	})
	run("netns", "add", a)
	run("netns", "add", b)
	run("link", "add", va, "type", "veth", "peer", "name", vb)
	run("link", "set", va, "netns", a)
	run("link", "set", vb, "netns", b)
	run("-n", a, "addr", "add", "10.79.0.1/24", "dev", va)
	run("-n", b, "addr", "add", "10.79.0.2/24", "dev", vb)
	for _, ns := range []string{a, b} {
		run("-n", ns, "link", "set", "lo", "up")
	}
	run("-n", a, "link", "set", va, "up")
	run("-n", b, "link", "set", vb, "up")
	return a, b
}

// inNetns runs fn on an OS thread switched into the named namespace. Sockets
// created in fn stay in that namespace after the thread switches back.
func inNetns(t *testing.T, name string, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := os.Open("/var/run/netns/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatalf("setns %s: %v", name, err)
	}
	defer func() {
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			panic("cannot return to the original network namespace: " + err.Error())
		}
	}()
	fn()
}
