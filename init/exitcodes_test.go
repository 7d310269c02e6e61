package main_test

import (
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testExitCodes(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
	})

	it("exits with the program's exit code, 0 to 255, as PID 1", func() {
		codes := make([]int, 256)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4)
		for code := range 256 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				codes[code] = run(t, true, nil, "sh", "-c", "exit "+itoa(code)).Code
			}()
		}
		wg.Wait()
		for code, got := range codes {
			Expect(got).To(Equal(code), "program exited %d", code)
		}
	})

	for _, c := range []struct {
		signal string
		code   int
	}{{"HUP", 129}, {"INT", 130}, {"KILL", 137}, {"SEGV", 139}, {"TERM", 143}} {
		it("exits 128+N when the program is killed by SIG"+c.signal, func() {
			r := run(t, true, nil, "sh", "-c", "kill -"+c.signal+" $$")
			Expect(r.Code).To(Equal(c.code))
		})
	}

	it("exits 0 for the codes listed in BPL_INIT_SUCCESS_EXIT_CODES", func() {
		env := []string{"BPL_INIT_SUCCESS_EXIT_CODES=143, 3"}
		Expect(run(t, true, env, "sh", "-c", "kill -TERM $$").Code).To(Equal(0))
		Expect(run(t, true, env, "sh", "-c", "exit 3").Code).To(Equal(0))
		Expect(run(t, true, env, "sh", "-c", "exit 4").Code).To(Equal(4))
	})

	it("execs the program in its own place when BPL_INIT_ENABLED=false", func() {
		cmd := command(false, []string{"BPL_INIT_ENABLED=false"}, "sh", "-c", "echo $$; exit 9")
		out, err := cmd.Output()
		Expect(err).To(HaveOccurred())
		Expect(cmd.ProcessState.ExitCode()).To(Equal(9))
		Expect(string(out)).To(Equal(itoa(cmd.Process.Pid) + "\n"))
	})
}
