package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// needTracing skips a test unless it runs as root with bpftrace installed
// (make deps installs it); this project's machines and CI are both.
func needTracing(t *testing.T) {
	t.Helper()
	testenv.Root(t)
	testenv.Binary(t, "bpftrace", "bpftrace")
}

// loopDevice attaches a new loop device over a sparse file of size bytes
// in a temporary directory, with the given logical block size (0: the
// default 512), and detaches it at cleanup. It returns the device's name
// (loopN).
func loopDevice(t *testing.T, size int64, sectorSize int) string {
	t.Helper()
	backing := filepath.Join(t.TempDir(), "loop.img")
	f, err := os.Create(backing)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := []string{"--find", "--show", "--direct-io=on"}
	if sectorSize > 0 {
		args = append(args, "--sector-size", strconv.Itoa(sectorSize))
	}
	out, err := exec.Command("losetup", append(args, backing)...).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup %v: %v: %s", args, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return filepath.Base(dev)
}

// devNumber is a block device's kernel dev_t (major<<20 | minor), as the
// block tracepoints report it.
func devNumber(t *testing.T, name string) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", name, "dev"))
	if err != nil {
		t.Fatal(err)
	}
	maj, min, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
	a, _ := strconv.ParseUint(maj, 10, 32)
	c, _ := strconv.ParseUint(min, 10, 32)
	return a<<20 | c
}

// ensureTracefs mounts tracefs where bpftrace looks for tracepoints, if it
// is not mounted, and unmounts it at cleanup (only then).
func ensureTracefs(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/tracing/events"); err == nil {
		return
	}
	if err := syscall.Mount("nodev", "/sys/kernel/tracing", "tracefs", 0, ""); err != nil {
		t.Fatalf("mount tracefs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount("/sys/kernel/tracing", 0); err != nil {
			t.Errorf("unmount tracefs: %v", err)
		}
	})
}

// bpftraceRun is a bpftrace process whose script printed "ready" from its
// BEGIN probe, i.e. with every probe attached.
type bpftraceRun struct {
	cmd  *exec.Cmd
	out  strings.Builder
	done chan error
}

func startBpftrace(t *testing.T, script string) *bpftraceRun {
	t.Helper()
	ensureTracefs(t)
	b := &bpftraceRun{cmd: exec.Command("bpftrace", "-e", script), done: make(chan error, 1)}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	b.cmd.Stderr = &stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.cmd.Process.Kill(); <-b.done })
	ready := make(chan struct{})
	go func() { // owned: b.done is received by stop and by the cleanup
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			b.out.WriteString(line)
			if strings.TrimSpace(line) == "ready" {
				close(ready)
			}
			if err != nil {
				io.Copy(io.Discard, r)
				b.done <- b.cmd.Wait()
				close(b.done)
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("bpftrace not ready after 30 s: %s", stderr.String())
	}
	return b
}

// stop ends bpftrace with SIGINT, which makes it print its maps, and
// returns what it printed.
func (b *bpftraceRun) stop(t *testing.T) string {
	t.Helper()
	b.cmd.Process.Signal(os.Interrupt)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatal("bpftrace did not exit on SIGINT")
	}
	return b.out.String()
}

// log2Bucket is one bucket of a bpftrace hist(): Count values in [Lo, Hi).
type log2Bucket struct{ Lo, Hi, Count int64 }

var bucketLine = regexp.MustCompile(`^\[(\d+[KMGT]?)(?:, (\d+[KMGT]?)\))?\]?\s+(\d+)\s+\|`)

// parseHist reads the hist() named map from bpftrace's output.
func parseHist(out, name string) ([]log2Bucket, error) {
	_, rest, ok := strings.Cut(out, "@"+name+":")
	if !ok {
		return nil, fmt.Errorf("no @%s in bpftrace output:\n%s", name, out)
	}
	var bs []log2Bucket
	for _, line := range strings.Split(rest, "\n")[1:] {
		m := bucketLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			break
		}
		lo, hi := unit(m[1]), unit(m[1])+1
		if m[2] != "" {
			hi = unit(m[2])
		}
		n, _ := strconv.ParseInt(m[3], 10, 64)
		bs = append(bs, log2Bucket{lo, hi, n})
	}
	return bs, nil
}

// unit reads bpftrace's bucket bounds: K, M, G, T are powers of 1024.
func unit(s string) int64 {
	mult := int64(1)
	for i, u := range "KMGT" {
		if strings.HasSuffix(s, string(u)) {
			mult = 1 << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n * mult
}

// bucketAt is the bucket holding the p-th percentile of bs: the value of
// rank p/100 · total rounded (at least 1), as hdrhistogram-go ranks it.
func bucketAt(bs []log2Bucket, p float64) log2Bucket {
	var total int64
	for _, b := range bs {
		total += b.Count
	}
	rank := max(int64(float64(total)*p/100+0.5), 1)
	var cum int64
	for _, b := range bs {
		cum += b.Count
		if cum >= rank {
			return b
		}
	}
	return bs[len(bs)-1]
}

// testContext is a context for a test's whole load.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
