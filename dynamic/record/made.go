package record

import "github.com/avcheck/avcheck/dynamic/record/avrt"

// varIDs gives a variable's events the id of the variable: its address,
// unless the rewritten code recorded an allocation (avrt.Made,
// MadeSlice) that returned an object over that address since it was
// last used, which then gets the address with its generation above it,
// addr | gen<<48, as chanIDs numbers channels. The garbage collector
// frees an object that no one uses any more and the allocator gives its
// memory to the next one, which two tests that share nothing may each
// make: without the generations, the new object's fields would be the
// old one's variables, and the tests' accesses a race. The race
// detector resets the shadow state of the memory every allocation
// returns, to the same end.
//
// An allocation touches only the addresses used since the last one over
// them, found through the page they lie in, so the cost is that of the
// objects made, not of the memory.
type varIDs struct {
	cur   map[uint64]uint64   // address used → its id
	gen   map[uint64]uint64   // address → generations made over it
	pages map[uint64][]uint64 // page → the addresses of cur in it
}

// pageShift gives the page of an address, the key of varIDs.pages.
const pageShift = 12

func newVarIDs() *varIDs {
	return &varIDs{cur: make(map[uint64]uint64), gen: make(map[uint64]uint64), pages: make(map[uint64][]uint64)}
}

// of returns the object id of e, in the order of the raw events.
func (vi *varIDs) of(e avrt.Event) uint64 {
	switch e.Kind {
	case avrt.KindMade:
		vi.made(e.Obj, e.Arg)
		return e.Obj
	case avrt.KindRead, avrt.KindReadValue, avrt.KindReadAddr, avrt.KindReadLen, avrt.KindWrite,
		avrt.KindAtomicLoad, avrt.KindAtomicStore, avrt.KindAtomicRMW,
		avrt.KindAcquire, avrt.KindRelease, avrt.KindRAcquire, avrt.KindRRelease,
		avrt.KindWGAdd, avrt.KindWGDone, avrt.KindWGWait,
		avrt.KindCondWait, avrt.KindCondSignal, avrt.KindCondBroadcast,
		avrt.KindContents:
	default:
		// A channel has chanIDs, a Once its own numbering (the
		// converter's onceGen), and a map element no address (mapped).
		return e.Obj
	}
	return vi.addr(e.Obj)
}

// mapped gives a map element's event (avrt.KindMapRead, KindMapWrite)
// the map's id as its Arg, and an element id of that map's generation:
// the elements of a map made where a freed one was (avrt.MadeMap) are
// other variables. Of a map's first generation, the ids are the
// runtime's.
func (vi *varIDs) mapped(e avrt.Event) avrt.Event {
	if e.Kind != avrt.KindMapRead && e.Kind != avrt.KindMapWrite {
		return e
	}
	e.Arg = vi.addr(e.Arg)
	if gen := e.Arg >> 48; gen != 0 {
		e.Obj = (e.Obj ^ gen*0x632be59bd9b4e019) | 1<<63
	}
	return e
}

// addr returns the id of address a: a with its generation above it.
func (vi *varIDs) addr(a uint64) uint64 {
	if id, ok := vi.cur[a]; ok {
		return id
	}
	if a>>48 != 0 {
		return a // no address of the program's memory
	}
	id := a | vi.gen[a]<<48
	vi.cur[a] = id
	vi.pages[a>>pageShift] = append(vi.pages[a>>pageShift], a)
	return id
}

// made starts a new generation of the addresses used in [p, p+size).
func (vi *varIDs) made(p, size uint64) {
	if size == 0 || p>>48 != 0 {
		return
	}
	end := p + size
	first, last := p>>pageShift, (end-1)>>pageShift
	if last-first >= uint64(len(vi.pages)) {
		// An array larger than the pages in use: look at those.
		for pg := range vi.pages {
			if pg >= first && pg <= last {
				vi.renew(pg, p, end)
			}
		}
		return
	}
	for pg := first; pg <= last; pg++ {
		vi.renew(pg, p, end)
	}
}

// renew starts a new generation of the addresses of page pg used in
// [p, end).
func (vi *varIDs) renew(pg, p, end uint64) {
	list, ok := vi.pages[pg]
	if !ok {
		return
	}
	keep := list[:0]
	for _, a := range list {
		if a < p || a >= end {
			keep = append(keep, a)
			continue
		}
		delete(vi.cur, a)
		if vi.gen[a] < 1<<15-1 {
			vi.gen[a]++
		}
	}
	if len(keep) == 0 {
		delete(vi.pages, pg)
		return
	}
	vi.pages[pg] = keep
}
