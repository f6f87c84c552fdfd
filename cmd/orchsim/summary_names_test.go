package main

import "github.com/orchsim/orchsim/fuzz"

// The tests' names for the summary types, which moved to package fuzz.
type (
	jsonSummary   = fuzz.Report
	jsonRow       = fuzz.ReportRow
	jsonProbe     = fuzz.ReportProbe
	jsonStory     = fuzz.ReportStory
	jsonGroup     = fuzz.ReportGroup
	jsonFailed    = fuzz.FailedSeed
	mergedSummary = fuzz.Merged
)
