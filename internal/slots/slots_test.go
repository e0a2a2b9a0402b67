package slots

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitFor polls until the gate shows running holders and waiting waiters (the goroutines under test get
// there on their own time).
func waitFor(t *testing.T, g *Gate, running, waiting int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, w := g.Counts()
		if r == running && w == waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gate shows %d running, %d waiting; want %d, %d", r, w, running, waiting)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAtMostNThenFIFO(t *testing.T) {
	const n = 3
	g := New(n)
	ctx := context.Background()
	var releases []func()
	for i := range n { // the Nth enters at once
		_, rel, err := g.Enter(ctx)
		if err != nil {
			t.Fatalf("enter %d: %v", i, err)
		}
		releases = append(releases, rel)
	}
	waitFor(t, g, n, 0)

	// The N+1th and later wait; each is queued before the next starts, so their order is known.
	const waiters = 5
	var (
		admitted = make(chan int, waiters)
		wg       sync.WaitGroup
		gone     = make([]chan struct{}, waiters)
	)
	for i := range waiters {
		gone[i] = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, rel, err := g.Enter(ctx)
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			admitted <- i
			<-gone[i]
			rel()
		}()
		waitFor(t, g, n, i+1)
	}
	// One slot given back admits exactly the first waiter.
	releases[0]()
	waitFor(t, g, n, waiters-1)
	if first := <-admitted; first != 0 {
		t.Fatalf("one release admitted waiter %d, want 0", first)
	}
	releases[0]() // a second call gives back nothing
	waitFor(t, g, n, waiters-1)

	// Each slot given back, by a first holder or an admitted waiter, admits the next waiter in line.
	frees := []func(){releases[1], releases[2]}
	for i := range waiters - 3 {
		frees = append(frees, func() { close(gone[i]) })
	}
	for i, free := range frees {
		free()
		if got := <-admitted; got != i+1 {
			t.Fatalf("slot %d went to waiter %d, want %d", i+1, got, i+1)
		}
	}
	for i := waiters - 3; i < waiters; i++ {
		close(gone[i])
	}
	wg.Wait()
	waitFor(t, g, 0, 0)
}

func TestReentrantAndOutside(t *testing.T) {
	g := New(1)
	ctx, rel, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Work under the holding context passes without a second slot (with one slot it would wait forever).
	inner, innerRel, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	innerRel()
	if r, _ := g.Counts(); r != 1 {
		t.Fatalf("inner release gave the slot back: %d running", r)
	}

	// Outside gives the request's slot back while f runs: another request takes it meanwhile, and Outside
	// waits in line for a slot again before it returns.
	want := errors.New("the model's error")
	orel := make(chan func(), 1)
	done := make(chan error, 1)
	go func() {
		done <- Outside(inner, func() error {
			if r, _ := g.Counts(); r != 0 {
				t.Errorf("inside Outside: %d running, want 0", r)
			}
			_, rel, err := g.Enter(context.Background())
			if err != nil {
				t.Error(err)
			}
			orel <- rel
			return want
		})
	}()
	waitFor(t, g, 1, 1) // the other request runs; Outside waits
	(<-orel)()
	if err := <-done; !errors.Is(err, want) {
		t.Fatalf("Outside returned %v, want f's error", err)
	}
	waitFor(t, g, 1, 0) // the request holds a slot again
	rel()
	waitFor(t, g, 0, 0)
	rel() // already given back: nothing happens
	waitFor(t, g, 0, 0)
	if err := Outside(context.Background(), func() error { return nil }); err != nil { // holds nothing: runs f
		t.Fatal(err)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	g := New(1)
	_, rel, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := g.Enter(ctx)
		errc <- err
	}()
	waitFor(t, g, 1, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", err)
	}
	waitFor(t, g, 1, 0) // it left the queue, holding nothing
	rel()
	waitFor(t, g, 0, 0)

	// An ended context does not queue.
	if _, _, err := g.Enter(ctx); err == nil {
		_, w := g.Counts()
		t.Fatalf("entered with an ended context (a free slot; %d waiting)", w)
	}
}

func TestNilGate(t *testing.T) {
	var g *Gate
	if r, w := g.Counts(); New(0) != nil || New(-1) != nil || r != 0 || w != 0 {
		t.Fatal("New(n < 1) must be the nil gate")
	}
	ctx, rel, err := g.Enter(context.Background())
	if err != nil || ctx == nil {
		t.Fatal(err)
	}
	rel()
}
