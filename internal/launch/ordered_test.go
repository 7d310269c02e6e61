package launch_test

import (
	"iter"
	"sort"
)

// ordered yields the cases of a table in name order: sclevine/spec evaluates the spec function
// once per test, so the tests must be declared in the same order every time.
func ordered[T any](cases map[string]T) iter.Seq2[string, T] {
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
