package launch

import "sort"

// Merged is the set of process types the image would have, had the group ended before this
// buildpack.
type Merged struct {
	// Processes holds one process per type, sorted by type.
	Processes []Process
	// DefaultType is the type the lifecycle would make the default process, or empty for none.
	DefaultType string
}

// Merge combines the process sets of the earlier buildpacks, given in group order, as the
// lifecycle's builder does: a later definition of a type replaces the earlier one whole; the
// default type is the last type declared default, and it is cleared when a later buildpack
// redefines that type without marking it default.
func Merge(sets [][]Process) Merged {
	byType := map[string]Process{}
	defaultType := ""
	for _, set := range sets {
		for _, p := range set {
			if p.Default {
				defaultType = p.Type
			} else if p.Type == defaultType {
				defaultType = ""
			}
			byType[p.Type] = p
		}
	}

	m := Merged{DefaultType: defaultType}
	for _, p := range byType {
		m.Processes = append(m.Processes, p)
	}
	sort.Slice(m.Processes, func(i, j int) bool { return m.Processes[i].Type < m.Processes[j].Type })
	return m
}
