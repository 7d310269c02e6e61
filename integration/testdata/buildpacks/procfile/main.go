// Command main is a stand-in for the Paketo Procfile buildpack on Buildpack API 0.7: it detects
// an app with a Procfile and turns each of its lines `type: command` into a process type, a shell
// process (direct = false) whose command is the rest of the line, the way
// paketo-buildpacks/procfile does on a stack that is not tiny without BP_DIRECT_PROCESS. The
// default type is web, else worker. bin/detect and bin/build are links to it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/buildpacks/libcnb"
	"github.com/paketo-buildpacks/libpak"
	"github.com/paketo-buildpacks/libpak/bard"
)

// line is a Procfile entry: a type, a colon and a command.
var line = regexp.MustCompile(`^([A-Za-z0-9_-]+):\s*(.+)$`)

func readProcfile(appDir string) (map[string]interface{}, error) {
	path := filepath.Join(appDir, "Procfile")
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("unable to open %s\n%w", path, err)
	}
	defer f.Close()
	types := map[string]interface{}{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if m := line.FindStringSubmatch(scanner.Text()); m != nil {
			types[m[1]] = m[2]
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("unable to read %s\n%w", path, err)
	}
	return types, nil
}

type detect struct{}

func (detect) Detect(context libcnb.DetectContext) (libcnb.DetectResult, error) {
	types, err := readProcfile(context.Application.Path)
	if err != nil || len(types) == 0 {
		return libcnb.DetectResult{}, err
	}
	return libcnb.DetectResult{Pass: true, Plans: []libcnb.BuildPlan{{
		Provides: []libcnb.BuildPlanProvide{{Name: "procfile"}},
		Requires: []libcnb.BuildPlanRequire{{Name: "procfile", Metadata: types}},
	}}}, nil
}

type build struct{ logger bard.Logger }

func (b build) Build(context libcnb.BuildContext) (libcnb.BuildResult, error) {
	b.logger.Title(context.Buildpack)
	result := libcnb.NewBuildResult()
	entry, ok, err := (&libpak.PlanEntryResolver{Plan: context.Plan}).Resolve("procfile")
	if err != nil || !ok {
		return result, err
	}
	for typ, command := range entry.Metadata {
		result.Processes = append(result.Processes, libcnb.Process{Type: typ, Command: command.(string), Direct: false})
	}
	sort.Slice(result.Processes, func(i, j int) bool { return result.Processes[i].Type < result.Processes[j].Type })
	for _, name := range []string{"web", "worker"} {
		for i := range result.Processes {
			if strings.EqualFold(result.Processes[i].Type, name) {
				result.Processes[i].Default = true
				return result, nil
			}
		}
	}
	return result, nil
}

func main() {
	libpak.Main(detect{}, build{logger: bard.NewLogger(os.Stdout)})
}
