package program

import _ "unsafe" // go:linkname

// Environ returns the environment exactly as the init received it from
// execve(2): every entry in order, duplicate names, empty entries and
// entries without '=' included, so that the program gets the block it would
// have got without the init. (os.Environ and syscall.Environ drop the later
// entries of a name given twice and the empty ones: with A=1 and A=3, a
// shell run through them would see A=1 where, run directly, it sees A=3.)
//
// Where a name is given twice, the init's own settings (BPL_INIT_*) and the
// PATH it searches are read from the first entry, as getenv(3) and Go's
// os.Getenv read them; shells read the last.
func Environ() []string { return runtimeEnvs() }

// runtimeEnvs is the Go runtime's copy of the environment block, made at
// start-up before anything could change it; each call returns a new slice.
//
//go:linkname runtimeEnvs syscall.runtime_envs
func runtimeEnvs() []string
