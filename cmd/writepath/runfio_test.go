package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunFioOutputFormat is `writepath run fio --output-format=...` on an
// embedded fabric of two workers: stdout holds only fio's merged output
// (JSON that parses as fio's client/server JSON: each worker's row and
// "All clients"; or terse lines), the progress goes to stderr, and
// --output writes the same to a file instead.
func TestRunFioOutputFormat(t *testing.T) {
	dir := t.TempDir()
	job := []string{"--name=x", "--ioengine=null", "--size=4m", "--bs=4k", "--rw=randwrite", "--numjobs=2", "--group_reporting"}
	run := func(args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var out, errOut bytes.Buffer
		all := append([]string{"fio", "--local-workers", "2", "--data-dir", dir, "--db", filepath.Join(dir, "wp.db")}, args...)
		if err := runKind(ctx, append(all, job...), &out, &errOut); err != nil {
			t.Fatalf("run %q: %v\n%s\n%s", args, err, &out, &errOut)
		}
		return out.String(), errOut.String()
	}
	out, progress := run("--output-format=json")
	var doc struct {
		ClientStats []struct {
			Jobname, Hostname string
			Write             struct {
				TotalIOs int64 `json:"total_ios"`
			}
		} `json:"client_stats"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if n := len(doc.ClientStats); n != 3 || doc.ClientStats[2].Jobname != "All clients" || doc.ClientStats[2].Write.TotalIOs != 4096 {
		t.Errorf("client_stats = %+v; want two workers' rows and All clients with 4096 writes", doc.ClientStats)
	}
	if !strings.Contains(progress, "finished") {
		t.Errorf("progress not on stderr: %q", progress)
	}
	out, _ = run("--minimal")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[2], ";All clients;") {
		t.Errorf("--minimal stdout = %q; want 3 terse lines, the last All clients", out)
	}
	file := filepath.Join(dir, "out.json")
	if out, _ = run("--output-format=json", "--output="+file); out != "" {
		t.Errorf("--output: stdout = %q; want nothing", out)
	}
	if b, err := os.ReadFile(file); err != nil || !json.Valid(b) {
		t.Errorf("--output file: %v, valid JSON %v", err, json.Valid(b))
	}
}
