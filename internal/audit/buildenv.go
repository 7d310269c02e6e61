package audit

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pid1-buildpacks/init/internal/config"
)

// buildEnvFile is one file of the builder's build-config environment (/cnb/build-config/env),
// which the lifecycle applies to the environment of every buildpack after the app developer's
// values (the platform's env files, pack build --env).
type buildEnvFile struct {
	// Path is the file's path in the builder.
	Path string
	// Variable and Action come from the file name, NAME[.ACTION]; an unsuffixed file is a
	// default.
	Variable, Action string
	Value            string
}

// buildEnv is the build-config environment in the order the lifecycle applies it: by file name
// (it reads the directory with os.ReadDir), each file with a known action once.
type buildEnv struct {
	files  []buildEnvFile
	delims map[string]string
	// Broken names a file the lifecycle cannot read (a dangling link): every build fails.
	Broken string
}

// readBuildEnv reads /cnb/build-config/env from the builder's file system.
func readBuildEnv(fs builderFS) (buildEnv, error) {
	env := buildEnv{delims: map[string]string{}}
	if !fs.isDir(buildConfigEnvDir) {
		return env, nil
	}
	names, resolved, err := fs.dir(buildConfigEnvDir)
	if err != nil {
		return env, err
	}
	slices.Sort(names)
	for _, name := range names {
		p := path.Join(resolved, name)
		if fs.isDir(p) {
			continue // the lifecycle skips directories, and links to them
		}
		contents, ok, err := fs.file(p)
		if err != nil {
			return env, err
		}
		shown := "/" + path.Join(buildConfigEnvDir, name)
		if !ok {
			env.Broken = shown
			continue
		}
		variable, action, _ := strings.Cut(name, ".")
		switch action {
		case "", "default", "override", "append", "prepend":
			env.files = append(env.files, buildEnvFile{Path: shown, Variable: variable, Action: action, Value: string(contents)})
		case "delim":
			env.delims[variable] = string(contents)
		}
	}
	return env, nil
}

// resolve returns the value a buildpack sees for variable when the app developer sets it to
// user (nil: not set), as the lifecycle computes it (env.WithOverrides): each file in turn, a
// default only when the value is still empty, an override replacing it, append and prepend
// joining with NAME.delim (nothing without it). It also returns the files that apply.
func (e buildEnv) resolve(variable string, user *string) (string, []string) {
	value := ""
	if user != nil {
		value = *user
	}
	var files []string
	for _, f := range e.files {
		if f.Variable != variable {
			continue
		}
		files = append(files, f.Path)
		delim := e.delims[variable]
		switch f.Action {
		case "", "default":
			if value == "" {
				value = f.Value
			}
		case "override":
			value = f.Value
		case "append":
			if value != "" {
				value += delim
			}
			value += f.Value
		case "prepend":
			if value != "" {
				value = delim + value
			}
			value = f.Value + value
		}
	}
	return value, files
}

// auditBuildEnv judges what the build-config environment does to the buildpack: problems when
// an image is not wrapped by default, or every build fails; else a note on whether app
// developers can opt out with BP_INIT_ENABLED=false, and warnings.
func auditBuildEnv(e buildEnv) (note string, problems, warnings []string) {
	if e.Broken != "" {
		return "", []string{fmt.Sprintf("%s cannot be read (a dangling link): the lifecycle fails every build", e.Broken)}, nil
	}
	str := func(s string) *string { return &s }
	value, files := e.resolve(config.Enabled, nil)
	from := sets(files)
	enabled, err := config.ParseEnabled(value)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s BP_INIT_ENABLED=%q, which is not true or false: every build fails", from, value))
	case !enabled:
		problems = append(problems, fmt.Sprintf("%s BP_INIT_ENABLED=%q unless the app developer sets it: images are not wrapped by default", from, value))
	}

	if value, files := e.resolve(config.ProcessTypes, nil); len(files) > 0 {
		from := sets(files)
		types, err := config.ParseTypes(value)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s BP_INIT_PROCESS_TYPES=%q, which names no process type: every build fails", from, value))
		case types != nil:
			problems = append(problems, fmt.Sprintf("%s BP_INIT_PROCESS_TYPES=%q: only %s wrapped, every other process type starts without the init",
				from, value, typesPhrase(types)))
		}
	}
	if len(problems) > 0 {
		return "", problems, nil
	}

	optedOut, files := e.resolve(config.Enabled, str("false"))
	from = sets(files)
	switch enabled, err := config.ParseEnabled(optedOut); {
	case len(files) == 0:
		note = "app developers can opt out with BP_INIT_ENABLED=false"
	case err != nil:
		note = fmt.Sprintf("BP_INIT_ENABLED=false fails the build (%s it to %q)", from, optedOut)
	case enabled:
		note = fmt.Sprintf("BP_INIT_ENABLED=false is ignored (%s)", strings.Join(files, ", "))
	default:
		note = fmt.Sprintf("app developers can opt out with BP_INIT_ENABLED=false (%s: a default)", strings.Join(files, ", "))
	}
	if on, files := e.resolve(config.Enabled, str("true")); len(files) > 0 {
		if enabled, err := config.ParseEnabled(on); err != nil || !enabled {
			warnings = append(warnings, fmt.Sprintf("BP_INIT_ENABLED=true set by the app developer becomes %q (%s)", on, strings.Join(files, ", ")))
		}
	}
	return note, nil, warnings
}

func typesPhrase(types []string) string {
	if len(types) == 1 {
		return "process type " + types[0] + " is"
	}
	return "process types " + strings.Join(types, ", ") + " are"
}

// sets says which files set a variable: "F sets" or "F, G set".
func sets(files []string) string {
	if len(files) == 1 {
		return files[0] + " sets"
	}
	return strings.Join(files, ", ") + " set"
}
