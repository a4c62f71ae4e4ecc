package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unitSettings reads a systemd unit's key=value lines (continuations
// joined; the last of a repeated key wins).
func unitSettings(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	line := ""
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			line += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		line += l
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
		line = ""
	}
	return out
}

// TestWorkerUnitSandbox (issue 13, point 10): the worker's systemd unit
// is hardened (NoNewPrivileges, ProtectSystem=strict and friends), and a
// worker confined as it confines one can still do its job: this test runs
// `writepath crash --power-loss` (a managed MariaDB, OLTP load, kill -9, a
// FUSE power cut, recovery, the durability check) under setpriv as an
// unprivileged user with no-new-privs and exactly the unit's ambient
// capabilities. (No systemd here to start the unit itself; `systemd-analyze
// verify` accepts it.)
func TestWorkerUnitSandbox(t *testing.T) {
	u := unitSettings(t, filepath.Join(deployDir, "systemd", "writepath-worker.service"))
	for k, want := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "RestrictSUIDSGID": "yes", "ProtectKernelModules": "yes", "LockPersonality": "yes"} {
		if u[k] != want {
			t.Errorf("worker unit %s=%q; want %q", k, u[k], want)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("needs root to run the worker's jobs as another user (make test runs as root)")
	}
	var caps []string
	for _, c := range strings.Fields(u["AmbientCapabilities"]) {
		caps = append(caps, "+"+strings.ToLower(strings.TrimPrefix(c, "CAP_")))
	}
	dir, err := os.MkdirTemp("", "wp-unit-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o711)
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	os.Chown(home, 65534, 65534)
	bin := filepath.Join(dir, "writepath")
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"--inh-caps="+strings.Join(caps, ","), "--ambient-caps="+strings.Join(caps, ","), "--no-new-privs", bin)
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "TMPDIR=" + home,
		cliChildEnv + "=" + strings.Join([]string{"crash", "--rounds=1", "--load-time=3s", "--tables=1", "--table-size=1000",
			"--power-loss", "--dir=" + filepath.Join(home, "db")}, "\x1f")}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("crash --power-loss as uid 65534 with no-new-privs and %v: %v\n%s", caps, err, out.String())
	}
	if !strings.Contains(out.String(), "lost acknowledged commits: 0") || !strings.Contains(out.String(), "power cut") {
		t.Errorf("crash --power-loss under the unit's confinement:\n%s", out.String())
	}
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
