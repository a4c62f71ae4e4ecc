//go:build race

package main

// raceDetector: the race detector slows every process several times
// (and its exit runs the detector's own teardown).
const raceDetector = true
