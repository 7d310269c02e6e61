// Package tabletest helps write table-driven specs with sclevine/spec.
package tabletest

import (
	"iter"
	"sort"
)

// Sorted yields the cases of a table in name order. sclevine/spec evaluates a spec function once
// per test, so the tests it declares must come in the same order every time, which ranging over
// the map itself does not give.
func Sorted[T any](cases map[string]T) iter.Seq2[string, T] {
	return func(yield func(string, T) bool) {
		names := make([]string, 0, len(cases))
		for name := range cases {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !yield(name, cases[name]) {
				return
			}
		}
	}
}
