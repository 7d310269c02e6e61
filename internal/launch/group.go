package launch

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// GroupEntry is one buildpack of the group the detector chose, as group.toml records it.
type GroupEntry struct {
	ID      string `toml:"id"`
	Version string `toml:"version"`
	API     string `toml:"api"`
}

// ReadGroup reads the ordered buildpacks of the group.toml at path. Image extensions, listed in a
// separate table, are not part of the result.
func ReadGroup(path string) ([]GroupEntry, error) {
	var group struct {
		Group []GroupEntry `toml:"group"`
	}
	if _, err := toml.DecodeFile(path, &group); err != nil {
		return nil, fmt.Errorf("unable to read %s\n%w", path, err)
	}
	for _, e := range group.Group {
		if e.ID == "" {
			return nil, fmt.Errorf("unable to read %s: a group entry has no id", path)
		}
	}
	return group.Group, nil
}

// EscapeID returns the directory name the lifecycle gives the layers of buildpack id.
func EscapeID(id string) string {
	return strings.ReplaceAll(id, "/", "_")
}
