package main

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/hostknob"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// openKnobs opens the host-knob applier of a worker (or of the embedded
// fabric's workers) on dataDir, without disk profiles (openHostChanges):
// the journal still restores what a killed run's profile left changed.
func openKnobs(dataDir string, allow hostknob.Allow, flag string, log *slog.Logger) (*hostknob.Host, error) {
	h, _, err := openHostChanges(dataDir, allow, diskprofile.Allow{}, flag, log)
	return h, err
}

// closeKnobs closes h if it was opened.
func closeKnobs(h *hostknob.Host) {
	if h != nil {
		h.Close()
	}
}

// parseHostFlags parses --host k=v values, refusing an unknown knob name
// before anything is submitted.
func parseHostFlags(kvs []string) ([]*writepathv1.HostSetting, error) {
	var out []*writepathv1.HostSetting
	for _, kv := range kvs {
		s, err := hostknob.ParseSetting(kv)
		if err != nil {
			return nil, fmt.Errorf("--host: %w", err)
		}
		if _, err := hostknob.Canonical(s.Name); err != nil {
			return nil, fmt.Errorf("--host: %w", err)
		}
		out = append(out, &writepathv1.HostSetting{Name: s.Name, Value: s.Value})
	}
	return out, nil
}

// checkHostName refuses an unknown knob name (client.PlanOptions.HostName).
func checkHostName(name string) error {
	_, err := hostknob.Canonical(name)
	return err
}

// hostNames are the canonical knob names of settings.
func hostNames(settings []*writepathv1.HostSetting) []string {
	var out []string
	for _, s := range settings {
		if c, err := hostknob.Canonical(s.GetName()); err == nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// embeddedAllow is what the embedded fabric's workers may change: the
// knobs the command names (--host), plus --allow-host; nothing without
// them.
func embeddedAllow(named []string, allowFlag []string) (hostknob.Allow, error) {
	return hostknob.ParseAllow(append(slices.Clone(allowFlag), strings.Join(named, ",")))
}

// knobsLog is the embedded fabric's log for restores at start-up.
func knobsLog(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
