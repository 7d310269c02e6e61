package main

import (
	"sort"
	"time"
)

// sample is a set of durations from repeated runs of one measurement.
type sample []time.Duration

// percentile returns the p-th percentile (0 < p <= 100) by the nearest-rank method.
func (s sample) percentile(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := append(sample(nil), s...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

func (s sample) median() time.Duration { return s.percentile(50) }

func (s sample) sum() time.Duration {
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return total
}
