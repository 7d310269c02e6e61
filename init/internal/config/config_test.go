package config_test

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
)

func TestConfig(t *testing.T) {
	spec.Run(t, "Config", testConfig, spec.Report(report.Terminal{}))
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func testConfig(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("uses the defaults when nothing is set or values are empty", func() {
		for _, env := range []map[string]string{{}, {
			"BPL_INIT_ENABLED": "", "BPL_INIT_SIGNAL_TARGET": "", "BPL_INIT_GRACE_PERIOD": "",
			"BPL_INIT_SIGNAL_REWRITE": "", "BPL_INIT_SUCCESS_EXIT_CODES": "", "BPL_INIT_LOG_LEVEL": "",
		}} {
			c, err := config.Load(lookup(env))
			Expect(err).NotTo(HaveOccurred())
			Expect(c).To(Equal(config.Config{Enabled: true, SignalTarget: config.TargetGroup, GracePeriod: 5 * time.Second, LogLevel: config.LevelError}))
		}
	})

	it("reads every variable", func() {
		c, err := config.Load(lookup(map[string]string{
			"BPL_INIT_ENABLED": "FALSE", "BPL_INIT_SIGNAL_TARGET": "child", "BPL_INIT_GRACE_PERIOD": "1m30s",
			"BPL_INIT_SIGNAL_REWRITE": "TERM:QUIT", "BPL_INIT_SUCCESS_EXIT_CODES": "143", "BPL_INIT_LOG_LEVEL": "debug",
		}))
		Expect(err).NotTo(HaveOccurred())
		Expect(c).To(Equal(config.Config{
			Enabled: false, SignalTarget: config.TargetChild, GracePeriod: 90 * time.Second,
			SignalRewrite:    map[unix.Signal]unix.Signal{unix.SIGTERM: unix.SIGQUIT},
			SuccessExitCodes: []int{143}, LogLevel: config.LevelDebug,
		}))
	})

	it("returns the first bad value as an *Error naming the variable and the accepted forms", func() {
		_, err := config.Load(lookup(map[string]string{"BPL_INIT_LOG_LEVEL": "loud"}))
		var cerr *config.Error
		Expect(errors.As(err, &cerr)).To(BeTrue())
		Expect(err.Error()).To(Equal(`invalid BPL_INIT_LOG_LEVEL="loud": expected error, info or debug`))
	})

	context("ParseGracePeriod", func() {
		for _, c := range []struct {
			value string
			want  time.Duration
		}{
			{"0", 0}, {"10", 10 * time.Second}, {"10s", 10 * time.Second}, {"500ms", 500 * time.Millisecond},
			{"1m30s", 90 * time.Second}, {"0s", 0}, {"1.5s", 1500 * time.Millisecond},
		} {
			it("accepts "+c.value, func() {
				Expect(config.ParseGracePeriod(c.value)).To(Equal(c.want))
			})
		}
		for _, bad := range []string{"-1", "-1s", "ten", "10 s", "1.5", "s", "99999999999"} {
			it("refuses "+bad, func() {
				_, err := config.ParseGracePeriod(bad)
				Expect(err).To(MatchError(ContainSubstring("invalid BPL_INIT_GRACE_PERIOD=\"" + bad + "\"")))
			})
		}
	})

	context("ParseSignalRewrite", func() {
		for _, c := range []struct {
			value string
			want  map[unix.Signal]unix.Signal
		}{
			{"TERM:QUIT", map[unix.Signal]unix.Signal{unix.SIGTERM: unix.SIGQUIT}},
			{"sigint:Sigterm, 10:12", map[unix.Signal]unix.Signal{unix.SIGINT: unix.SIGTERM, unix.SIGUSR1: unix.SIGUSR2}},
			{"WINCH:64", map[unix.Signal]unix.Signal{unix.SIGWINCH: 64}},
		} {
			it("parses "+c.value, func() {
				Expect(config.ParseSignalRewrite(c.value)).To(Equal(c.want))
			})
		}
		for _, bad := range []string{"TERM", "TERM:", ":QUIT", "TERM:QUIT:INT", "NOPE:TERM", "TERM:NOPE", "KILL:TERM",
			"STOP:TERM", "CHLD:TERM", "URG:TERM", "TERM:65", "0:TERM", "TERM:QUIT,TERM:INT", "TERM:QUIT,"} {
			it("refuses "+bad, func() {
				_, err := config.ParseSignalRewrite(bad)
				Expect(err).To(MatchError(HavePrefix("invalid BPL_INIT_SIGNAL_REWRITE=\"" + bad + "\"")))
			})
		}
	})

	context("ParseSuccessExitCodes", func() {
		it("parses comma-separated codes and drops duplicates", func() {
			Expect(config.ParseSuccessExitCodes("143, 0,255,143")).To(Equal([]int{143, 0, 255}))
		})
		for _, bad := range []string{"256", "-1", "a", "1,,2", "143,", "1 2"} {
			it("refuses "+bad, func() {
				_, err := config.ParseSuccessExitCodes(bad)
				Expect(err).To(MatchError(HavePrefix("invalid BPL_INIT_SUCCESS_EXIT_CODES=")))
			})
		}
	})

	context("the keyword variables", func() {
		for _, c := range []struct {
			parse    func(string) error
			good     []string
			bad      []string
			variable string
		}{
			{func(v string) error { _, err := config.ParseEnabled(v); return err }, []string{"true", "false", "TRUE", "False"}, []string{"yes", "1", "on", "truee"}, "BPL_INIT_ENABLED"},
			{func(v string) error { _, err := config.ParseSignalTarget(v); return err }, []string{"group", "child", "Group"}, []string{"pgrp", "children", "all"}, "BPL_INIT_SIGNAL_TARGET"},
			{func(v string) error { _, err := config.ParseLogLevel(v); return err }, []string{"error", "info", "debug", "DEBUG"}, []string{"warn", "trace", "0"}, "BPL_INIT_LOG_LEVEL"},
		} {
			it("accepts and refuses the right values of "+c.variable, func() {
				for _, v := range c.good {
					Expect(c.parse(v)).To(Succeed(), v)
				}
				for _, v := range c.bad {
					Expect(c.parse(v)).To(MatchError(HavePrefix("invalid "+c.variable+"=\""+v+"\": expected ")), v)
				}
			})
		}
		it("maps the values", func() {
			Expect(config.ParseEnabled("false")).To(BeFalse())
			Expect(config.ParseSignalTarget("child")).To(Equal(config.TargetChild))
			Expect(config.ParseLogLevel("info")).To(Equal(config.LevelInfo))
		})
	})
}
