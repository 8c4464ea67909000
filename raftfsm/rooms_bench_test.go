package raftfsm

import (
	"fmt"
	"testing"
)

// BenchmarkRoomsOf lists the rooms of an org of none and of one that owns
// 1,000, in a group of 48k rooms; scan is RoomsOf as it was:
//
//	go test -run '^$' -bench RoomsOf ./raftfsm/
func BenchmarkRoomsOf(b *testing.B) {
	f := New(4)
	for i := range 48_000 {
		org := fmt.Sprintf("org_%d", i%48)
		f.Apply(1, (&RoomCmd{Op: RoomCreate, RoomID: fmt.Sprintf("room_%05d", i), Name: "r", Org: org, At: int64(i)}).Encode())
	}
	for _, org := range []string{"org_none", "org_1"} {
		b.Run(org, func(b *testing.B) {
			for b.Loop() {
				f.RoomsOf(org, 1)
			}
		})
		b.Run(org+"/scan", func(b *testing.B) {
			for b.Loop() {
				scanRoomsOf(f, org, 1)
			}
		})
	}
}
