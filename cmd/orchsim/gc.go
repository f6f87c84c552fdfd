package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The collector's policy for the commands that run seeds (seedCommands).
//
// A seed allocates about a megabyte and drops it at its end, over a live
// heap of about 2 MB, so at Go's default pace (GOGC=100: collect once the
// heap has doubled) the collector runs every two or three seeds and is the
// largest single cost of a chaos seed. These commands therefore let the
// heap grow to five times its live size between collections (GOGC=400:
// chaos 4.1 -> 3.5 ms per seed, terminal-remount 4.6 -> 4.4; GOGC=800,
// which fuzz and mutants used before, was no faster, GOGC=off slower),
// under a soft memory limit of half the machine's memory (or of the
// cgroup's limit, where that is lower), so that a large world
// (scenarios.Config.Threads), whose live heap is hundreds of megabytes,
// cannot grow to five times that past what the machine has: near the
// limit the collector runs more often instead. A user who sets GOGC or
// GOMEMLIMIT chooses the collector's pace: then neither is touched.
// `orchsim bench` prints the setting it ran with in its header.

// seedGCPercent is the GOGC the policy sets.
const seedGCPercent = 400

// seedCommands are the commands that run seeds, which apply the policy.
var seedCommands = map[string]bool{
	"run": true, "replay": true, "fuzz": true, "shrink": true, "explain": true,
	"mutants": true, "bench": true, "script": true,
}

// gcPolicy is what the policy decided: Apply false when the environment
// sets the collector (GOGC or GOMEMLIMIT non-empty); else the GOGC percent
// and the soft memory limit in bytes (0: no limit, the machine's memory
// being unknown).
type gcPolicy struct {
	Apply   bool
	Percent int
	Limit   int64
}

// decideGC is the policy as a function of the environment (getenv) and
// the machine's memory in bytes (0 when unknown).
func decideGC(getenv func(string) string, memory int64) gcPolicy {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return gcPolicy{}
	}
	p := gcPolicy{Apply: true, Percent: seedGCPercent}
	if memory > 0 {
		p.Limit = memory / 2
	}
	return p
}

// gogcWarning returns a one-line warning when GOGC is set to something Go
// does not read (neither "off" nor an integer): the runtime then quietly
// runs at GOGC=100, and the policy, seeing GOGC set, stays off. "" when
// GOGC is unset or valid.
func gogcWarning(getenv func(string) string) string {
	v := getenv("GOGC")
	if v == "" || v == "off" {
		return ""
	}
	if _, err := strconv.Atoi(v); err == nil {
		return ""
	}
	return fmt.Sprintf("orchsim: warning: GOGC=%q is neither an integer nor off: Go runs the collector at GOGC=100 (unset GOGC for orchsim's own setting)", v)
}

// applySeedGC sets the collector as decideGC says for this process'
// environment and machine; nothing when the environment sets it.
func applySeedGC() {
	p := decideGC(os.Getenv, machineMemory())
	if !p.Apply {
		return
	}
	debug.SetGCPercent(p.Percent)
	if p.Limit > 0 {
		debug.SetMemoryLimit(p.Limit)
	}
}

// machineMemory returns the memory this process may use in bytes: the
// machine's (/proc/meminfo MemTotal), or the cgroup v2 limit
// (/sys/fs/cgroup/memory.max) where that is lower; 0 where neither can be
// read (not Linux).
func machineMemory() int64 {
	total := memTotal(readFile("/proc/meminfo"))
	if lim := cgroupLimit(readFile("/sys/fs/cgroup/memory.max")); lim > 0 && (total == 0 || lim < total) {
		return lim
	}
	return total
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// memTotal parses /proc/meminfo's "MemTotal: N kB" line into bytes (0 if
// absent or malformed).
func memTotal(meminfo string) int64 {
	for line := range strings.Lines(meminfo) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64/1024 {
				return kb * 1024
			}
		}
	}
	return 0
}

// cgroupLimit parses a cgroup v2 memory.max ("max" or bytes) into bytes
// (0 for no limit or a malformed file).
func cgroupLimit(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
