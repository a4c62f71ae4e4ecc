package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRandomDamageNeverHangs overwrites a few random bytes of a real store
// 1,000 times and reads each copy: every read returns (a branch page
// pointing back at itself once sent bbolt's cursor descending forever).
func TestRandomDamageNeverHangs(t *testing.T) {
	seed := tinyStore(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		b := append([]byte(nil), seed...)
		for range 1 + rng.IntN(8) {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		path := filepath.Join(dir, fmt.Sprintf("d%d.db", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- readAll(path) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			keep := filepath.Join(t.ArtifactDir(), "hang.db")
			os.WriteFile(keep, b, 0o600)
			t.Fatalf("damaged copy %d: the read did not return in 10 s (kept in %s)", i, keep)
		}
		os.Remove(path)
	}
}
