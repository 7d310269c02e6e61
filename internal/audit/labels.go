package audit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The labels pack and the lifecycle write on builders and app images.
const (
	BuilderMetadataLabel = "io.buildpacks.builder.metadata"
	OrderLabel           = "io.buildpacks.buildpack.order"
	SystemLabel          = "io.buildpacks.buildpack.system"
	BuildMetadataLabel   = "io.buildpacks.build.metadata"
)

// InitBuildpackID is the id of the buildpack whose presence a builder audit looks for.
const InitBuildpackID = "pid1-buildpacks/init"

// SystemBuildpacksPlatformAPI is the first Platform API whose lifecycle runs system buildpacks
// (RFC 0101); an older lifecycle ignores [system] without a word.
var SystemBuildpacksPlatformAPI = apiVersion{0, 15}

// buildpackRef is one buildpack as the builder's labels name it.
type buildpackRef struct {
	ID       string `json:"id" toml:"id"`
	Version  string `json:"version,omitempty" toml:"version"`
	Optional bool   `json:"optional,omitempty" toml:"optional"`
}

func (b buildpackRef) String() string {
	if b.Version == "" {
		return b.ID
	}
	return b.ID + "@" + b.Version
}

// builderMetadata is the part of io.buildpacks.builder.metadata the audit reads.
type builderMetadata struct {
	Lifecycle struct {
		Version string `json:"version"`
		APIs    struct {
			Platform struct {
				Supported []string `json:"supported"`
			} `json:"platform"`
		} `json:"apis"`
		// API is the legacy single-version form older builders carry.
		API struct {
			Platform string `json:"platform"`
		} `json:"api"`
	} `json:"lifecycle"`
	Buildpacks []buildpackRef `json:"buildpacks"`
}

// order is io.buildpacks.buildpack.order.
type order []struct {
	Group []buildpackRef `json:"group" toml:"group"`
}

// system is io.buildpacks.buildpack.system.
type system struct {
	Pre struct {
		Buildpacks []buildpackRef `json:"buildpacks" toml:"buildpacks"`
	} `json:"pre" toml:"pre"`
	Post struct {
		Buildpacks []buildpackRef `json:"buildpacks" toml:"buildpacks"`
	} `json:"post" toml:"post"`
}

// buildMetadata is the part of an app image's io.buildpacks.build.metadata the audit reads.
type buildMetadata struct {
	Processes []struct {
		Type string `json:"type"`
		// Command is an array since Platform API 0.10, a string before.
		Command     json.RawMessage `json:"command"`
		Args        []string        `json:"args"`
		Direct      bool            `json:"direct"`
		BuildpackID string          `json:"buildpackID"`
	} `json:"processes"`
	Buildpacks []buildpackRef `json:"buildpacks"`
}

// decodeLabel decodes the JSON of label into v. A label that is missing is reported by ok, one
// that cannot be decoded is an error naming it.
func decodeLabel(labels map[string]string, label string, v any) (ok bool, err error) {
	raw, ok := labels[label]
	if !ok || strings.TrimSpace(raw) == "" {
		return false, nil
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return true, fmt.Errorf("unable to read label %s: %w", label, err)
	}
	return true, nil
}

// apiVersion is a Buildpacks API version, major.minor.
type apiVersion struct{ Major, Minor int }

func parseAPI(s string) (apiVersion, error) {
	major, minor, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return apiVersion{}, fmt.Errorf("invalid API version %q: expected major.minor", s)
	}
	var v apiVersion
	var err error
	if v.Major, err = strconv.Atoi(major); err != nil {
		return apiVersion{}, fmt.Errorf("invalid API version %q: expected major.minor", s)
	}
	if v.Minor, err = strconv.Atoi(minor); err != nil {
		return apiVersion{}, fmt.Errorf("invalid API version %q: expected major.minor", s)
	}
	return v, nil
}

func (v apiVersion) less(w apiVersion) bool {
	return v.Major < w.Major || (v.Major == w.Major && v.Minor < w.Minor)
}

func (v apiVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }
