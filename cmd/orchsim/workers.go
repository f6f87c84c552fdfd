package main

import "runtime"

func defaultWorkers() int { return runtime.NumCPU() }
