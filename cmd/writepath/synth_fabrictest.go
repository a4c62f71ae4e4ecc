//go:build fabrictest

package main

// Built with -tags fabrictest, the binary also links the synthetic test
// kind (deploy/netns/test.sh falls back to it when no real kind is linked).
import _ "github.com/writepath/writepath/internal/fabrictest/testkind"
