package rpc

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// A streamed answer (cat, get, dag/export) passes its writes through the
// pipe: once warm, a write and its reading allocate nothing (the copy
// goes into a buffer the reader has finished with), and the bytes come
// out whole and in order.
func TestChunkPipe_ReusesBuffers(t *testing.T) {
	p := newChunkPipe(4)
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	buf := make([]byte, 4<<10)
	cycle := func() {
		if _, err := p.Write(chunk); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(chunk); {
			k, err := p.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
	}
	cycle()
	if a := testing.AllocsPerRun(20, cycle); a != 0 {
		t.Errorf("%v allocations per 256 KiB write and read, want 0", a)
	}

	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, p); close(done) }()
	var want bytes.Buffer
	for i := 0; i < 100; i++ {
		c := bytes.Repeat([]byte{byte(i)}, 1000+i*97)
		want.Write(c)
		p.Write(c)
	}
	p.CloseWrite()
	<-done
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("bytes out differ: %d against %d", out.Len(), want.Len())
	}
}

// A writer that runs ahead of the reader and then falls behind (a
// stream whose reads from disk and writes to the socket alternate in
// speed) still reuses its buffers: after warming up, no allocation.
func TestChunkPipe_ReusesBuffersWhenAhead(t *testing.T) {
	const depth = 4
	p := newChunkPipe(depth)
	chunk := bytes.Repeat([]byte("y"), 256<<10)
	buf := make([]byte, 4<<10)
	drain := func() {
		for n := 0; n < len(chunk); {
			k, err := p.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
	}
	// The writer fills the queue while the reader is in a chunk, then
	// the reader catches up: every buffer is in use at once.
	cycle := func() {
		p.Write(chunk)
		drain() // the reader holds this one
		for i := 0; i < depth; i++ {
			p.Write(chunk)
		}
		for i := 0; i < depth; i++ {
			drain()
		}
	}
	cycle()
	if a := testing.AllocsPerRun(20, cycle); a != 0 {
		t.Errorf("%v allocations per cycle, want 0", a)
	}
}

// Each answer has a pipe of its own: once one has ended, the next
// answer's writes reuse its buffers, whatever garbage collections ran
// between (sync.Pool would have emptied), so a small cat allocates no
// chunk buffer of its own.
func TestChunkPipe_BuffersOutliveThePipe(t *testing.T) {
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	answer := func() {
		p := newChunkPipe(4)
		go func() {
			p.Write(chunk)
			p.CloseWrite()
		}()
		if n, err := io.Copy(io.Discard, p); err != nil || n != int64(len(chunk)) {
			t.Fatalf("read %d, %v", n, err)
		}
	}
	answer()
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		answer()
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
		t.Errorf("20 answers of 256 KiB allocated %d bytes, want less than one chunk", got)
	}
}

// A bufList keeps at most its count of buffers, none over its size.
func TestBufList_Bounds(t *testing.T) {
	l := newBufList(2, 1024)
	l.put(make([]byte, 10, 2048))
	if len(l.free) != 0 {
		t.Fatal("kept a buffer over the size")
	}
	for range 3 {
		l.put(make([]byte, 10, 1024))
	}
	if len(l.free) != 2 {
		t.Fatalf("kept %d buffers, want 2", len(l.free))
	}
	if b := l.get(512); len(b) != 0 || cap(b) != 1024 {
		t.Fatalf("get: len %d cap %d, want an emptied kept buffer", len(b), cap(b))
	}
	if b := l.get(4096); cap(b) < 4096 {
		t.Fatalf("get of 4096: cap %d", cap(b))
	}
}
