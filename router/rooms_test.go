package router

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hebbdb/hebb/raftfsm"
)

// insertionSortRoomViews is sortRoomViews as it was: a stable insertion
// sort by creation, then ID.
func insertionSortRoomViews(v []raftfsm.RoomView) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && (v[j].Room.CreatedAt < v[j-1].Room.CreatedAt ||
			v[j].Room.CreatedAt == v[j-1].Room.CreatedAt && v[j].Room.ID < v[j-1].Room.ID); j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// gatheredRooms returns n views as RoomsOf gathers them: groups' lists,
// each sorted, one after the other; creation times and IDs repeat (even
// the pair of them, as no real group list holds) so ties show, and every
// view has its own name so an unstable order would show.
func gatheredRooms(rng *rand.Rand, n, groups int) []raftfsm.RoomView {
	v := make([]raftfsm.RoomView, 0, n)
	for g := range groups {
		list := make([]raftfsm.RoomView, n/groups+rng.IntN(3))
		for i := range list {
			list[i].Room = raftfsm.Room{ID: fmt.Sprintf("room_%02d", rng.IntN(40)),
				CreatedAt: int64(rng.IntN(n/4 + 1)), Name: fmt.Sprintf("g%d-%d", g, i)}
		}
		insertionSortRoomViews(list)
		v = append(v, list...)
	}
	return v
}

func TestSortRoomViewsMatchesInsertionSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 7, 100, 2000} {
		for _, groups := range []int{1, 3, 8} {
			got := gatheredRooms(rng, n, groups)
			rng.Shuffle(len(got)/2, func(i, j int) { got[i], got[j] = got[j], got[i] })
			want := make([]raftfsm.RoomView, len(got))
			copy(want, got)
			sortRoomViews(got)
			insertionSortRoomViews(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d rooms in %d groups: order differs from the insertion sort", n, groups)
			}
		}
	}
}

// BenchmarkSortRoomViews orders 48k rooms gathered from 8 groups:
//
//	go test -run '^$' -bench SortRoomViews ./router/
func BenchmarkSortRoomViews(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	views := gatheredRooms(rng, 48_000, 8)
	v := make([]raftfsm.RoomView, len(views))
	for b.Loop() {
		copy(v, views)
		sortRoomViews(v)
	}
}
