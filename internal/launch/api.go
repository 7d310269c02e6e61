package launch

import (
	"fmt"
	"strconv"
	"strings"
)

// apiLessThan reports whether the Buildpack API version api (for example "0.8") is older than
// other. Both must have the form <major>.<minor>.
func apiLessThan(api, other string) (bool, error) {
	a, err := parseAPI(api)
	if err != nil {
		return false, err
	}
	b, err := parseAPI(other)
	if err != nil {
		return false, err
	}
	if a[0] != b[0] {
		return a[0] < b[0], nil
	}
	return a[1] < b[1], nil
}

func parseAPI(api string) ([2]int, error) {
	major, minor, ok := strings.Cut(api, ".")
	if !ok {
		return [2]int{}, fmt.Errorf("invalid Buildpack API version %q: expected <major>.<minor>", api)
	}
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 {
		return [2]int{}, fmt.Errorf("invalid Buildpack API version %q: expected <major>.<minor>", api)
	}
	return [2]int{ma, mi}, nil
}
