package avrt

import (
	"hash/maphash"
	"sync"
	"unsafe"
)

// The wrappers below replace the calls of the packages under test to the
// sync package, at their call sites. A release is recorded before it
// happens and an acquire after it returned, so that the recorded order is
// one the program could have run.

// Lock locks m and records the acquire.
func Lock(m *sync.Mutex, site uint32) {
	m.Lock()
	if enabled {
		emit(KindAcquire, ptr(m), 0, site)
	}
}

// LockerLock locks l, a sync.Locker, and records the acquire when l is a
// *sync.Mutex (a sync.Cond's L, most often); another Locker is locked
// unrecorded, as a lock of code not rewritten is.
func LockerLock(l sync.Locker, site uint32) {
	if m, ok := l.(*sync.Mutex); ok {
		Lock(m, site)
		return
	}
	l.Lock()
}

// LockerUnlock records the release and unlocks l, as LockerLock.
func LockerUnlock(l sync.Locker, site uint32) {
	if m, ok := l.(*sync.Mutex); ok {
		Unlock(m, site)
		return
	}
	l.Unlock()
}

// TryLock tries to lock m and records the acquire if it did.
func TryLock(m *sync.Mutex, site uint32) bool {
	ok := m.TryLock()
	if ok && enabled {
		emit(KindAcquire, ptr(m), 0, site)
	}
	return ok
}

// Unlock records the release of m and unlocks it.
func Unlock(m *sync.Mutex, site uint32) {
	if enabled {
		emit(KindRelease, ptr(m), 0, site)
	}
	m.Unlock()
}

// WLock write-locks m and records the acquire.
func WLock(m *sync.RWMutex, site uint32) {
	m.Lock()
	if enabled {
		emit(KindAcquire, ptr(m), 0, site)
	}
}

// TryWLock tries to write-lock m and records the acquire if it did.
func TryWLock(m *sync.RWMutex, site uint32) bool {
	ok := m.TryLock()
	if ok && enabled {
		emit(KindAcquire, ptr(m), 0, site)
	}
	return ok
}

// WUnlock records the release of m's write lock and unlocks it.
func WUnlock(m *sync.RWMutex, site uint32) {
	if enabled {
		emit(KindRelease, ptr(m), 0, site)
	}
	m.Unlock()
}

// RLock read-locks m and records the read-acquire.
func RLock(m *sync.RWMutex, site uint32) {
	m.RLock()
	if enabled {
		emit(KindRAcquire, ptr(m), 0, site)
	}
}

// TryRLock tries to read-lock m and records the read-acquire if it did.
func TryRLock(m *sync.RWMutex, site uint32) bool {
	ok := m.TryRLock()
	if ok && enabled {
		emit(KindRAcquire, ptr(m), 0, site)
	}
	return ok
}

// RUnlock records the read-release of m and unlocks it.
func RUnlock(m *sync.RWMutex, site uint32) {
	if enabled {
		emit(KindRRelease, ptr(m), 0, site)
	}
	m.RUnlock()
}

// WGAdd records wg.Add(delta) and does it.
func WGAdd(wg *sync.WaitGroup, delta int, site uint32) {
	if enabled {
		emit(KindWGAdd, ptr(wg), uint64(int64(delta)), site)
	}
	wg.Add(delta)
}

// WGDone records wg.Done() and does it.
func WGDone(wg *sync.WaitGroup, site uint32) {
	if enabled {
		emit(KindWGDone, ptr(wg), 0, site)
	}
	wg.Done()
}

// WGWait waits for wg and records that the wait returned.
func WGWait(wg *sync.WaitGroup, site uint32) {
	wg.Wait()
	if enabled {
		emit(KindWGWait, ptr(wg), 0, site)
	}
}

// CondWait waits on c, recording, as the program does them, the release
// of c.L (a *sync.Mutex or the write lock of a *sync.RWMutex; another
// Locker's operations are not recorded), the wake-up and the re-acquire.
func CondWait(c *sync.Cond, site uint32) {
	if !enabled {
		c.Wait()
		return
	}
	var l uint64
	switch m := c.L.(type) {
	case *sync.Mutex:
		l = ptr(m)
	case *sync.RWMutex:
		l = ptr(m)
	}
	if l != 0 {
		emit(KindRelease, l, 0, site)
	}
	c.Wait()
	emit(KindCondWait, ptr(c), 0, site)
	if l != 0 {
		emit(KindAcquire, l, 0, site)
	}
}

// CondSignal records c.Signal() and does it.
func CondSignal(c *sync.Cond, site uint32) {
	if enabled {
		emit(KindCondSignal, ptr(c), 0, site)
	}
	c.Signal()
}

// CondBroadcast records c.Broadcast() and does it.
func CondBroadcast(c *sync.Cond, site uint32) {
	if enabled {
		emit(KindCondBroadcast, ptr(c), 0, site)
	}
	c.Broadcast()
}

// PoolPut records p.Put(x) and does it: the goroutine that gets x back
// from the pool learns what this one did before (as the race detector
// has it), though the pool holds no lock the program can see. An item
// is named by its interface's data word, which the pool keeps as it is:
// the pointer of a pointer, the box of any other value.
func PoolPut(p *sync.Pool, x any, site uint32) {
	if enabled && x != nil {
		emit(KindPoolPut, uint64(uintptr(dataWord(x))), 0, site)
	}
	p.Put(x)
}

// PoolGet does p.Get() and records that it returned the item, and
// returns it.
func PoolGet(p *sync.Pool, site uint32) any {
	x := p.Get()
	if enabled && x != nil {
		emit(KindPoolGet, uint64(uintptr(dataWord(x))), 0, site)
	}
	return x
}

// dataWord returns the data word of the interface value x.
func dataWord(x any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1]
}

// OnceDo calls o.Do(f) and records that it returned. The call that runs f
// records its return inside Do, before Do marks o done, so that it comes
// before the returns of the calls that waited for it.
func OnceDo(o *sync.Once, f func(), site uint32) {
	if !enabled {
		o.Do(f)
		return
	}
	ran := false
	o.Do(func() {
		f()
		ran = true
		emit(KindOnce, ptr(o), 1, site)
	})
	if !ran {
		emit(KindOnce, ptr(o), 0, site)
	}
}

// chanPtr returns the channel an interface holds, by its address.
func chanPtr(ch any) uint64 {
	return uint64(uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&ch))[1]))
}

// chanCap returns the capacity of the channel an interface holds (0 for
// a nil one), read from the runtime's hchan, whose second word is the
// buffer's size (dataqsiz), as cap(ch) would without knowing ch's type.
func chanCap(ch any) uint64 {
	p := (*[2]unsafe.Pointer)(unsafe.Pointer(&ch))[1]
	if p == nil {
		return 0
	}
	return uint64(*(*uint)(unsafe.Add(p, unsafe.Sizeof(uint(0)))))
}

// MadeChan records that make returned the channel ch, and returns it: a
// channel made where another was that the garbage collector freed is
// another channel.
func MadeChan[C any](ch C, site uint32) C {
	if enabled {
		emit(KindMakeChan, chanPtr(ch), chanCap(ch), site)
	}
	return ch
}

// Made records that an allocation (&T{...}, new(T)) returned p, and
// returns it: the variables of an object made where another was that
// the garbage collector freed are other variables, though they have the
// old ones' addresses.
func Made[T any](p *T, site uint32) *T {
	if p != nil && recorded(unsafe.Pointer(p)) {
		if size := unsafe.Sizeof(*p); size > 0 {
			emit(KindMade, uint64(uintptr(unsafe.Pointer(p))), uint64(size), site)
		}
	}
	return p
}

// MadeSlice records that make returned the slice s, whose backing array
// is new, and returns it, as Made does for an object.
func MadeSlice[S ~[]E, E any](s S, site uint32) S {
	madeArray(s, site)
	return s
}

// madeArray records that s's backing array is new.
func madeArray[S ~[]E, E any](s S, site uint32) {
	a := unsafe.Pointer(unsafe.SliceData(s))
	if cap(s) > 0 && recorded(a) {
		var e E
		if size := unsafe.Sizeof(e); size > 0 {
			emit(KindMade, uint64(uintptr(a)), uint64(cap(s))*uint64(size), site)
		}
	}
}

// Appended records that append(old, ...) returned s, and returns it:
// when s's backing array is not old's, append made it, and its
// variables are new ones, as MadeSlice's are, though the array has the
// address of one the garbage collector freed (a slice grown element by
// element leaves a freed array at each doubling, for the allocator to
// give the next object).
func Appended[S ~[]E, E any](old, s S, site uint32) S {
	if unsafe.SliceData(s) != unsafe.SliceData(old) {
		madeArray(s, site)
	}
	return s
}

// MadeMap records that a map was made (make, or a literal), and returns
// it: the elements and contents of a map made where another was that the
// garbage collector freed are other variables, as Made's are.
func MadeMap[M ~map[K]V, K comparable, V any](m M, site uint32) M {
	if enabled && m != nil {
		emit(KindMade, uint64(uintptr(mapPtr(m))), 1, site)
	}
	return m
}

// Send records a send on ch, before it.
func Send(ch any, site uint32) {
	if enabled {
		emit(KindSend, chanPtr(ch), chanCap(ch), site)
	}
}

// Sent records a send on ch that a select's case made, after it: the
// case was chosen, so its send happened.
func Sent(ch any, site uint32) {
	if enabled {
		emit(KindSent, chanPtr(ch), chanCap(ch), site)
	}
}

// Recv records a receive from ch that returned v, and returns v.
func Recv[T any](v T, ch any, site uint32) T {
	if enabled {
		emit(KindRecv, chanPtr(ch), chanCap(ch), site)
	}
	return v
}

// Received records a receive from ch that returned.
func Received(ch any, site uint32) {
	if enabled {
		emit(KindRecv, chanPtr(ch), chanCap(ch), site)
	}
}

// RecvFrom receives from ch, records that the receive returned, and
// returns what it received: the receive of an operand that is not
// evaluated a second time (<-f()), which Recv's caller would.
func RecvFrom[T any](ch <-chan T, site uint32) T {
	v := <-ch
	Received(ch, site)
	return v
}

// RecvFromOK is RecvFrom for a receive of two values (v, ok := <-f()).
func RecvFromOK[T any](ch <-chan T, site uint32) (T, bool) {
	v, ok := <-ch
	Received(ch, site)
	return v, ok
}

// RangeEnd records that a range over ch ended.
func RangeEnd(ch any, site uint32) {
	if enabled {
		emit(KindRangeEnd, chanPtr(ch), chanCap(ch), site)
	}
}

// Close records the close of ch, before it.
func Close(ch any, site uint32) {
	if enabled {
		emit(KindClose, chanPtr(ch), chanCap(ch), site)
	}
}

// AtomicStore records an atomic store to *p, before it.
func AtomicStore[T any](p *T, site uint32) {
	if enabled {
		emit(KindAtomicStore, ptr(p), 0, site)
	}
}

// Loaded records an atomic load of *p that returned v, and returns v.
func Loaded[T, P any](v T, p *P, site uint32) T {
	if enabled {
		emit(KindAtomicLoad, ptr(p), 0, site)
	}
	return v
}

// Modified records an atomic read-modify-write of *p that returned v, and
// returns v.
func Modified[T, P any](v T, p *P, site uint32) T {
	if enabled {
		emit(KindAtomicRMW, ptr(p), 0, site)
	}
	return v
}

// Swapped records a CompareAndSwap of *p that returned swapped, and
// returns swapped: one that swapped read and wrote *p in one step; one
// that did not only read it, and wrote nothing another goroutine could
// lose or see.
func Swapped[P any](swapped bool, p *P, site uint32) bool {
	if enabled {
		if swapped {
			emit(KindAtomicRMW, ptr(p), 0, site)
		} else {
			emit(KindAtomicLoad, ptr(p), FailedCAS, site)
		}
	}
	return swapped
}

// FailedCAS is the Arg of a KindAtomicLoad that a CompareAndSwap that
// did not swap made.
const FailedCAS = 1

var seed = maphash.MakeSeed()

// mapElem names an element of a map by the map and the key: a hash of
// them with the top bit set, which no address has.
func mapElem[K comparable](m unsafe.Pointer, k K) uint64 {
	return (maphash.Comparable(seed, k) ^ uint64(uintptr(m))*0x9e3779b97f4a7c15) | 1<<63
}

func mapPtr[M any](m M) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// MapRef is a map whose element accesses a probe records: Map(m,
// site).Read(k). The key goes through the method, typed by the map, so
// that it converts to the map's key type as it does in m[k].
type MapRef[K comparable, V any] struct {
	m    unsafe.Pointer
	site uint32
}

// Map returns m, for recording an access of one of its elements.
func Map[M ~map[K]V, K comparable, V any](m M, site uint32) MapRef[K, V] {
	return MapRef[K, V]{mapPtr(m), site}
}

// Read records a read of the element k.
func (r MapRef[K, V]) Read(k K) {
	if enabled {
		emit(KindMapRead, mapElem(r.m, k), uint64(uintptr(r.m)), r.site)
	}
}

// Write records a write of the element k (an assignment or a delete),
// which writes the map's contents too.
func (r MapRef[K, V]) Write(k K) {
	if enabled {
		emit(KindMapWrite, mapElem(r.m, k), uint64(uintptr(r.m)), r.site)
	}
}

// Contents records a read of all of m (len, range).
func Contents[M ~map[K]V, K comparable, V any](m M, site uint32) {
	if enabled {
		emit(KindContents, uint64(uintptr(mapPtr(m))), 0, site)
	}
}

// CloseChan records the close of ch and closes it.
func CloseChan[T any](ch chan T, site uint32) {
	if enabled {
		emit(KindClose, chanPtr(ch), uint64(cap(ch)), site)
	}
	close(ch)
}

// CloseSend is CloseChan for a send-only channel.
func CloseSend[T any](ch chan<- T, site uint32) {
	if enabled {
		emit(KindClose, chanPtr(ch), uint64(cap(ch)), site)
	}
	close(ch)
}
