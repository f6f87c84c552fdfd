package store

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Every string field of Result is in resultStrings (once), and every
// other field is one PackResult keeps: a field added to Result without
// packing it fails here.
func TestPackedResult_CoversEveryField(t *testing.T) {
	var r Result
	listed := map[uintptr]bool{}
	for _, f := range resultStrings(&r) {
		p := reflect.ValueOf(f).Pointer()
		require.False(t, listed[p], "listed twice")
		listed[p] = true
	}
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() == reflect.String {
			assert.True(t, listed[v.Field(i).Addr().Pointer()], "string field %s not in resultStrings", f.Name)
			continue
		}
		assert.Contains(t, []string{"ThreadIDs", "RunOrdinal", "RestoreFiles", "HasPendingChildRuns"}, f.Name,
			"field %s is not packed", f.Name)
	}
}

// A packed Result reads back equal to the original, whichever fields are
// set, after later results filled and replaced the backing array.
func TestPackedResult_RoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var rows Rows
		n := rapid.IntRange(1, 3*packedChunk/4).Draw(t, "results")
		want := make([]Result, n)
		packed := make([]PackedResult, n)
		for i := range n {
			var r Result
			v := reflect.ValueOf(&r).Elem()
			for j := range v.NumField() {
				if !rapid.Bool().Draw(t, "set") {
					continue
				}
				f := v.Field(j)
				switch f.Kind() {
				case reflect.String:
					f.SetString(fmt.Sprintf("%s-%d", v.Type().Field(j).Name, i))
				case reflect.Int:
					f.SetInt(int64(i + 1))
				case reflect.Bool:
					f.SetBool(true)
				case reflect.Slice: // non-nil, empty included
					ids := []string{}
					for k := range rapid.IntRange(0, 3).Draw(t, "thread-ids") {
						ids = append(ids, fmt.Sprint("t", i, ".", k))
					}
					f.Set(reflect.ValueOf(ids))
				}
			}
			want[i] = r
			packed[i] = rows.PackResult(r)
		}
		for i := range n {
			require.Equal(t, want[i], packed[i].Result(), "result %d", i)
		}
		var zero PackedResult
		require.Equal(t, Result{}, zero.Result())
	})
}

// A PackedResult stays 40 bytes on 64-bit platforms: every receipt has one.
func TestPackedResult_Size(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		assert.Equal(t, uintptr(40), unsafe.Sizeof(PackedResult{}))
	}
}
