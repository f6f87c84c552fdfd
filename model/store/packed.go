package store

// PackedResult is a Result as a receipt keeps it: only its non-empty
// string fields, in field order, in a slice cut from a shared backing
// array (Rows.PackResult), with a bit per field saying which are set. A
// receipt's result is written once and only read back on a replay, and
// most of a Result's 17 fields are empty, so a PackedResult (40 bytes;
// ThreadIDs go after the set fields, in the same backing array) is an
// eighth of a Result's 312 bytes (receipts are never deleted: at 1,000
// threads a run keeps up to about 110,000 of them). The zero value is the
// zero Result.
type PackedResult struct {
	// strs are the set string fields, in resultStrings order, then the
	// nThreads ThreadIDs.
	strs       []string
	set        uint32 // bit i: resultStrings field i is set
	runOrdinal int32
	nThreads   uint32
	flags      uint8 // packedRestoreFiles, packedPendingChildRuns, packedThreadIDs
}

const (
	packedRestoreFiles uint8 = 1 << iota
	packedPendingChildRuns
	packedThreadIDs // ThreadIDs is not nil (it may be empty)
)

// resultStrings lists r's string fields, in a fixed order (the order of
// PackedResult.strs). TestPackedResult_RoundTrips holds it to every
// string field of Result.
func resultStrings(r *Result) [15]*string {
	return [15]*string{&r.TaskID, &r.ChildThreadID, &r.MessageID, &r.ScheduleID, &r.RunID, &r.Status, &r.Summary,
		&r.InstanceID, &r.InterruptedRunID, &r.Delivery, &r.CheckpointID, &r.TransferID, &r.SourceRunID,
		&r.LatestTerminalRunID, &r.LatestTerminalStatus}
}

// packedChunk is how many strings Rows.PackResult's backing arrays hold.
const packedChunk = 1024

// PackResult returns res packed, its strings in the rows' shared backing
// array (a full one is left to the results that point into it).
func (rs *Rows) PackResult(res Result) PackedResult {
	fields := resultStrings(&res)
	if int(int32(res.RunOrdinal)) != res.RunOrdinal || uint64(len(res.ThreadIDs)) > 1<<32-1 {
		panic("store: a result's run ordinal or thread ids do not fit a packed result")
	}
	p := PackedResult{runOrdinal: int32(res.RunOrdinal), nThreads: uint32(len(res.ThreadIDs))}
	n := len(res.ThreadIDs)
	for i, f := range fields {
		if *f != "" {
			p.set |= 1 << i
			n++
		}
	}
	if n > 0 {
		if cap(rs.resultStrs)-len(rs.resultStrs) < n {
			rs.resultStrs = make([]string, 0, max(packedChunk, n))
		}
		start := len(rs.resultStrs)
		for _, f := range fields {
			if *f != "" {
				rs.resultStrs = append(rs.resultStrs, *f)
			}
		}
		rs.resultStrs = append(rs.resultStrs, res.ThreadIDs...)
		p.strs = rs.resultStrs[start:len(rs.resultStrs):len(rs.resultStrs)]
	}
	if res.ThreadIDs != nil {
		p.flags |= packedThreadIDs
	}
	if res.RestoreFiles {
		p.flags |= packedRestoreFiles
	}
	if res.HasPendingChildRuns {
		p.flags |= packedPendingChildRuns
	}
	return p
}

// Result returns the Result p packs.
func (p *PackedResult) Result() Result {
	res := Result{RunOrdinal: int(p.runOrdinal), RestoreFiles: p.flags&packedRestoreFiles != 0,
		HasPendingChildRuns: p.flags&packedPendingChildRuns != 0}
	j := 0
	if p.set != 0 {
		fields := resultStrings(&res)
		for i, f := range fields {
			if p.set&(1<<i) != 0 {
				*f = p.strs[j]
				j++
			}
		}
	}
	if p.flags&packedThreadIDs != 0 {
		res.ThreadIDs = p.strs[j : j+int(p.nThreads) : j+int(p.nThreads)]
		if p.nThreads == 0 {
			res.ThreadIDs = []string{}
		}
	}
	return res
}
