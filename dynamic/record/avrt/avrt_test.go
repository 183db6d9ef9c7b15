package avrt

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"unsafe"
)

// The tests of this package record into one file, started once.
var (
	startOnce sync.Once
	startFile string
	startErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if startFile != "" {
		os.RemoveAll(filepath.Dir(startFile))
	}
	os.Exit(code)
}

func begin(t testing.TB) {
	startOnce.Do(func() {
		dir, err := os.MkdirTemp(os.Getenv("AVRT_DIR"), "avrt-test-")
		if err != nil {
			startErr = err
			return
		}
		startFile = filepath.Join(dir, "raw")
		startErr = start(startFile)
	})
	if startErr != nil {
		t.Fatal(startErr)
	}
}

// readRaw returns the events of the file, by sequence number.
func readRaw(t *testing.T, name string) []Event {
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for off := HeaderBytes; off+ChunkBytes <= len(data); off += ChunkBytes {
		for i := 0; i < ChunkEvents; i++ {
			b := data[off+i*EventSize:]
			e := Event{
				Seq: binary.LittleEndian.Uint64(b), G: binary.LittleEndian.Uint64(b[8:]),
				Obj: binary.LittleEndian.Uint64(b[16:]), Arg: binary.LittleEndian.Uint64(b[24:]),
				Site: binary.LittleEndian.Uint32(b[32:]), Kind: Kind(b[36]),
			}
			if e.Seq == 0 {
				break
			}
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
	return evs
}

func TestGoid(t *testing.T) {
	if getg() == nil {
		t.Skip("no g on this architecture")
	}
	begin(t)
	if goidOffset < 0 {
		t.Fatal("calibration found no offset of the goroutine id")
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, b := goid(), slowGoid(); a != b {
				t.Errorf("goid() = %d, runtime.Stack says %d", a, b)
			}
		}()
	}
	wg.Wait()
}

// heapInt is a variable on the heap, for tests and benchmarks whose
// accesses must be recorded: those of a goroutine's stack are not.
var heapInt = new(int)

// growStack calls itself n times with a frame of a few hundred bytes, so
// that the goroutine's stack grows (and moves) past a few levels.
//
//go:noinline
func growStack(n int) int {
	var pad [256]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return growStack(n-1) + int(pad[n%len(pad)])
}

// TestPrivate checks that the accesses of a goroutine's own stack are not
// recorded, those of the heap are, and that a stack that grew and moved
// is still the goroutine's.
func TestPrivate(t *testing.T) {
	if getg() == nil {
		t.Skip("no g on this architecture")
	}
	begin(t)
	if !stackKnown {
		t.Fatal("calibration did not find the stack's bounds in the g")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var x int
		before := ptr(&x)
		if !private(unsafe.Pointer(&x)) || private(unsafe.Pointer(heapInt)) {
			t.Errorf("private: the stack's variable %v, the heap's %v; want true, false", private(unsafe.Pointer(&x)), private(unsafe.Pointer(heapInt)))
		}
		Write(&x, 0x7e571)
		Write(heapInt, 0x7e572)
		growStack(2000)
		if after := ptr(&x); after == before || !private(unsafe.Pointer(&x)) {
			t.Errorf("after the stack grew: the variable at %#x (before %#x), private %v; want it moved, and private", after, before, private(unsafe.Pointer(&x)))
		}
		Write(&x, 0x7e573)
	}()
	<-done
	sites := map[uint32]int{}
	for _, e := range readRaw(t, startFile) {
		sites[e.Site]++
	}
	// The file holds the events of every test run before (-count).
	if sites[0x7e571] != 0 || sites[0x7e573] != 0 || sites[0x7e572] == 0 {
		t.Errorf("events of the stack's variable %d and %d, of the heap's %d; want none, none and some", sites[0x7e571], sites[0x7e573], sites[0x7e572])
	}
}

// TestRecord records the events of goroutines that share a counter under
// a lock, more than a chunk's worth, and reads them back: every event is
// there once, in an order where each goroutine's own events keep theirs.
func TestRecord(t *testing.T) {
	begin(t)
	from := seq.Load() // the file holds the events of the tests run before
	const workers, iters = 4, 3 * ChunkEvents
	var mu sync.Mutex
	var n int
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				Lock(&mu, uint32(w))
				ReadInt(&n, uint32(i))
				n++
				Write(&n, uint32(i))
				Unlock(&mu, uint32(w))
			}
		}()
	}
	wg.Wait()
	evs := readRaw(t, startFile)
	counts := make(map[Kind]int)
	last := make(map[uint64]uint32) // per goroutine, the site of its last access
	held := uint64(0)
	for _, e := range evs {
		if e.Seq <= from || e.Obj != ptr(&mu) && e.Obj != ptr(&n) {
			continue
		}
		counts[e.Kind]++
		switch e.Kind {
		case KindAcquire:
			if held != 0 {
				t.Fatalf("event %d: acquire while g%d holds the lock", e.Seq, held)
			}
			held = e.G
		case KindRelease:
			if held != e.G {
				t.Fatalf("event %d: release by g%d, held by g%d", e.Seq, e.G, held)
			}
			held = 0
		case KindWrite:
			if last[e.G] != e.Site {
				t.Fatalf("event %d: write at %d after a read at %d", e.Seq, e.Site, last[e.G])
			}
		case KindReadValue:
			last[e.G] = e.Site
		}
	}
	for _, k := range []Kind{KindAcquire, KindRelease, KindReadValue, KindWrite} {
		if counts[k] != workers*iters {
			t.Errorf("%d events of kind %d, want %d", counts[k], k, workers*iters)
		}
	}
}

// BenchmarkLoop records the accesses of one goroutine's loop: the
// runtime's cost per event without contention.
func BenchmarkLoop(b *testing.B) {
	begin(b)
	n := heapInt
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ReadInt(n, 1)
		Write(n, 2)
		*n++
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLoopStopped is BenchmarkLoop once the recording has stopped
// at its limit: what each probe costs for the rest of a long run.
func BenchmarkLoopStopped(b *testing.B) {
	begin(b)
	stopped.Store(true)
	b.Cleanup(func() { stopped.Store(false) })
	n := heapInt
	for i := 0; i < b.N; i++ {
		ReadInt(n, 1)
		Write(n, 2)
		*n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/probe")
}

// BenchmarkPingPong records two goroutines handing a counter to each
// other through a mutex, each round a lock, a read, a write and an
// unlock: the cost per event with the goroutines on two Ps.
func BenchmarkPingPong(b *testing.B) {
	begin(b)
	var mu sync.Mutex
	var n int
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < b.N/2; i++ {
				Lock(&mu, 1)
				ReadInt(&n, 2)
				n++
				Write(&n, 3)
				Unlock(&mu, 4)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(4*(b.N/2)*2)/b.Elapsed().Seconds(), "events/s")
}

// polled is read around TestBranchesCoalesce's branches (not on the
// stack, which the runtime does not record).
var polled int

// Branches that follow one another, with no event between, are one raw
// event that counts them (Arg, one less), so that a loop that polls
// without an access to record does not spend the recording's events.
func TestBranchesCoalesce(t *testing.T) {
	begin(t)
	from := seq.Load()
	g := goid()
	Read(&polled, 1)
	for range 1000 {
		Branch()
	}
	Read(&polled, 2)
	evs := readRaw(t, startFile)
	var mine []Event
	for _, e := range evs {
		if e.Seq > from && e.G == g {
			mine = append(mine, e)
		}
	}
	branches, passed := 0, uint64(0)
	for _, e := range mine {
		if e.Kind == KindBranch {
			branches++
			passed += 1 + e.Arg
		}
	}
	// One event, or a few more if the goroutine moved to another P.
	if passed != 1000 || branches > 10 {
		t.Errorf("%d branch events counting %d branches, want about 1 counting 1000", branches, passed)
	}
	if len(mine) < 2 || mine[0].Kind != KindRead || mine[len(mine)-1].Kind != KindRead || mine[len(mine)-1].Site != 2 {
		t.Errorf("events %v, want a read, the branches and a read", mine)
	}
}
