package mysqld

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// state is DIR/instance.json: what Open needs to find a server started by
// another process (the mysqld CLI starts and stops in separate runs).
type state struct {
	Binary string `json:"binary"`
	Port   int    `json:"port"`
	Listen string `json:"listen,omitempty"`
	Socket string `json:"socket"`
	// PasswordApplied says the datadir's root accounts have the password
	// of root.password.
	PasswordApplied bool      `json:"password_applied,omitempty"`
	PID             int       `json:"pid,omitempty"`
	Settings        []Setting `json:"settings,omitempty"`
}

func (in *Instance) statePath() string { return filepath.Join(in.dir, "instance.json") }

// saveState records the instance; pid 0 means stopped.
func (in *Instance) saveState(pid int) error {
	b, err := json.MarshalIndent(state{Binary: in.binary, Port: in.port, Listen: in.listen, Socket: in.socket,
		PID: pid, Settings: in.settings, PasswordApplied: in.pwApplied}, "", "  ")
	if err != nil {
		return fmt.Errorf("save instance state: %w", err)
	}
	if err := os.WriteFile(in.statePath(), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save instance state: %w", err)
	}
	return nil
}

// RecordedBinary is the server binary instance.json in dir names ("" when
// there is none): the one Open runs when Options.Binary is empty.
func RecordedBinary(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "instance.json"))
	if err != nil {
		return ""
	}
	var st state
	if json.Unmarshal(b, &st) != nil {
		return ""
	}
	return st.Binary
}

// Open finds the instance recorded in dir by an earlier New. Fields of
// opts that are set (Binary, Port, Socket, Settings, timeouts, Detach)
// replace the recorded ones. A server started by another process is
// adopted: Stop and Kill signal it by pid, but Close leaves it running only
// when opts.Detach is set.
func Open(ctx context.Context, opts Options) (*Instance, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("open mysqld instance %s: %w", opts.Dir, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "instance.json"))
	if os.IsNotExist(err) {
		return New(ctx, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("open mysqld instance %s: %w", dir, err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("open mysqld instance %s: instance.json: %w", dir, err)
	}
	if opts.Binary == "" {
		opts.Binary = st.Binary
	}
	if opts.Port == 0 {
		opts.Port = st.Port
	}
	if opts.Listen == "" {
		opts.Listen = st.Listen
	}
	if opts.Socket == "" && (pidAlive(st.PID) || st.Socket != filepath.Join(dir, "mysqld.sock")) {
		// A stopped instance of an older writepath had its socket in DIR
		// itself; it moves to DIR/run at the next start.
		opts.Socket = st.Socket
	}
	if opts.Settings == nil {
		opts.Settings = st.Settings
	}
	in, err := newInstance(ctx, opts, st)
	if err != nil {
		return nil, err
	}
	if pidAlive(st.PID) && in.pidFileMatches(st.PID) {
		in.proc = &process{pid: st.PID}
		return in, in.saveState(st.PID)
	}
	return in, nil
}

// pidFileMatches guards against a recycled pid: the server's own pid file
// must name the same process.
func (in *Instance) pidFileMatches(pid int) bool {
	b, err := os.ReadFile(in.PIDFile())
	if err != nil {
		// An older writepath kept the pid file in DIR itself.
		if b, err = os.ReadFile(filepath.Join(in.dir, "mysqld.pid")); err != nil {
			return false
		}
	}
	var got int
	_, _ = fmt.Sscanf(string(b), "%d", &got)
	return got == pid
}
