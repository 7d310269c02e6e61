// Package rewrite turns a process type into one that starts through the init, so that the
// launcher's argv, with or without user arguments, is the init, "--" and the argv the launcher
// would have built for the original process.
package rewrite

import (
	"github.com/buildpacks/libcnb/v2"

	"github.com/pid1-buildpacks/init/internal/launch"
)

// Separator is the argument that ends the init's own arguments.
const Separator = "--"

// Bash is the shell the launcher runs Buildpack API 0.8 shell processes with.
const Bash = "/bin/bash"

// Wrap returns the Buildpack API 0.10 process that starts p through the init at initPath, keeping
// its type and the given default flag; image is what a shell process's script needs to know of
// the image.
//
// The launcher (lifecycle launch/process.go, Platform API 0.10 and later) builds argv from a
// command of more than one element as the command followed by the user's arguments if any, else
// by the process arguments; the wrapped command always has more than one element. Therefore:
//   - Buildpack API 0.9+ processes keep command, args and working-dir: [init, --, command...],
//     args. Their user arguments replaced args before and still do.
//   - Buildpack API 0.8 direct processes appended the user's arguments to command and args, so
//     the args move into the command: [init, --, command, args...] with no args.
//   - Buildpack API 0.7/0.8 shell processes become [init, --, /bin/bash, -c, script,
//     /cnb/process/<type>, command, args...] with no args and no working-dir, where script
//     (ShellScript) sources the profile scripts, changes to the working directory and runs the
//     command as the launcher's bash did. The launcher starts the init in the app directory, as
//     it started bash: a working-dir with $VAR, or one that does not exist, is bash's to handle.
//
// The wrapped process is ours, Buildpack API 0.10 and direct: the launcher sources no profile
// scripts for it, which is why the script does.
func Wrap(p launch.Process, initPath string, image Image, isDefault bool) libcnb.Process {
	command := []string{initPath, Separator}
	var args []string
	workingDir := p.WorkingDirectory
	switch {
	case !p.Legacy:
		command = append(command, p.Command...)
		args = append(args, p.Args...)
	case p.Direct:
		command = append(command, p.Command[0])
		command = append(command, p.Args...)
	default:
		command = append(command, Bash, "-c", ShellScript(p.Type, p.WorkingDirectory, image), Caller(p.Type), p.Command[0])
		command = append(command, p.Args...)
		workingDir = ""
	}
	return libcnb.Process{
		Type:             p.Type,
		Command:          command,
		Arguments:        args,
		WorkingDirectory: workingDir,
		Default:          isDefault,
	}
}
