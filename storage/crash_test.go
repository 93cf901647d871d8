package storage_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

// The crash tests run the step in a child process (this test binary,
// told by crashEnv what to do) and kill it with SIGKILL after growing
// delays, then check the store after each kill.
const crashEnv = "CAIRN_STORAGE_CRASH_CHILD"

func init() {
	mode := os.Getenv(crashEnv)
	if mode == "" {
		return
	}
	var err error
	// Small runs, so that kills land in seals and merges of the index.
	storage.SetRunSizes(32, 8, 4, 64)
	switch mode {
	case "migrate":
		storage.SetMigrateChunk(64 << 10)
		var s *storage.Store
		if s, err = storage.Open(os.Getenv("CAIRN_STORE"), nil); err == nil {
			err = s.Close()
		}
	case "reclaim":
		var s *storage.Store
		if s, err = storage.Open(os.Getenv("CAIRN_STORE"), &storage.Options{SegmentBytes: 64 << 10}); err == nil {
			_, err = s.Reclaim(context.Background(), storage.ReclaimOptions{})
			s.Close()
		}
	case "put":
		// Puts numbered blocks one at a time, printing each number once
		// the put returned (acknowledged).
		var s *storage.Store
		if s, err = storage.Open(os.Getenv("CAIRN_STORE"), nil); err == nil {
			for i := 0; err == nil; i++ {
				if err = s.Blockstore().Put(context.Background(), numbered(i)); err == nil {
					fmt.Println(i)
				}
			}
		}
	case "putmany":
		// The same, 64 blocks per PutMany: a commit each, sealing runs
		// and taking merge steps.
		var s *storage.Store
		if s, err = storage.Open(os.Getenv("CAIRN_STORE"), nil); err == nil {
			for i := 0; err == nil; i += 64 {
				var batch []blocks.Block
				for j := i; j < i+64; j++ {
					batch = append(batch, numbered(j))
				}
				if err = s.Blockstore().PutMany(context.Background(), batch); err == nil {
					fmt.Println(i + 63)
				}
			}
		}
	case "dsput":
		// Steps of a block and datastore writes (dslog_test.go),
		// printing each step's number once all its writes returned.
		var s *storage.Store
		if s, err = storage.Open(os.Getenv("CAIRN_STORE"), nil); err == nil {
			for i := 0; err == nil; i++ {
				if err = dsStep(s, i); err == nil {
					fmt.Println(i)
				}
			}
		}
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runKilled starts the child in mode on the store at path and kills it
// after d; it reports whether the child finished first.
func runKilled(t *testing.T, mode, path string, d time.Duration) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+mode, "CAIRN_STORE="+path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s child: %v", mode, err)
		}
		return true
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return false
	}
}

// numbered is block i of the "put" child: 1000 bytes derived from i.
func numbered(i int) blocks.Block {
	seed := sha256.Sum256([]byte(strconv.Itoa(i)))
	data := bytes.Repeat(seed[:], 32)[:1000]
	h, _ := mh.Sum(data, mh.SHA2_256, -1)
	b, _ := blocks.NewBlockWithCid(data, cid.NewCidV1(cid.Raw, h))
	return b
}

// Ensure every put acknowledged before a kill -9 is there after it: the
// blocks acknowledged once durable in the segment and not yet indexed
// are indexed at the next open.
func TestCrash_Puts(t *testing.T) { testCrashPuts(t, "put") }

// The same with batches: kills land in index commits that seal runs and
// take merge steps.
func TestCrash_PutMany(t *testing.T) { testCrashPuts(t, "putmany") }

func testCrashPuts(t *testing.T, mode string) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	total := 0
	for round, d := range []time.Duration{30 * time.Millisecond, 80 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		acked := runAcked(t, mode, path, d)
		s := mustOpen(t, path)
		for i := 0; i <= acked; i++ {
			mustRead(t, s, numbered(i))
		}
		mustCheck(t, s)
		st, _ := s.Stat()
		s.Close()
		t.Logf("round %d: %d puts acknowledged before the kill, %d blocks stored", round, acked+1, st.NumBlocks)
		total += acked + 1
	}
	if total == 0 {
		t.Fatal("no put was acknowledged before a kill: nothing tested")
	}
}

// runAcked starts the child in mode on the store at path, kills it after
// d and returns the last number it printed (-1 for none).
func runAcked(t *testing.T, mode, path string, d time.Duration) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+mode, "CAIRN_STORE="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := -1
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if i, err := strconv.Atoi(sc.Text()); err == nil {
				acked = i
			}
		}
		close(done)
	}()
	time.Sleep(d)
	cmd.Process.Kill()
	<-done
	cmd.Wait()
	return acked
}

func checkBlocks(t *testing.T, s *storage.Store, live, gone []blocks.Block) {
	t.Helper()
	for _, b := range live {
		mustRead(t, s, b)
	}
	for _, b := range gone {
		if _, err := s.Blockstore().Get(context.Background(), b.Cid()); !ipld.IsNotFound(err) {
			t.Fatalf("removed block %s: %v", b.Cid(), err)
		}
	}
	mustCheck(t, s)
}

// Ensure a migration from schema 1 killed at any point resumes at the
// next open and loses nothing.
func TestCrash_Migration(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	blks := testutil.WriteSchema1Store(t, path, 3000, map[string]string{"/pins/a": "b"})
	kills := 0
	for d := 2 * time.Millisecond; ; d *= 2 {
		if runKilled(t, "migrate", path, d) {
			break
		}
		kills++
	}
	t.Logf("migration killed %d times before it finished", kills)
	if kills == 0 {
		t.Fatal("the migration finished before the first kill: nothing tested")
	}
	s := mustOpen(t, path)
	defer s.Close()
	checkBlocks(t, s, blks, nil)
	if st, _ := s.Stat(); st.NumBlocks != 3000 {
		t.Fatalf("%d blocks", st.NumBlocks)
	}
	if _, err := os.Stat(path + ".v1"); !os.IsNotExist(err) {
		t.Fatalf("schema-1 file left: %v", err)
	}
}

// Ensure a Reclaim killed at any point leaves every live block readable,
// every removed one gone and the invariants whole, and is finished by a
// later one.
func TestCrash_Reclaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s, err := storage.Open(path, &storage.Options{SegmentBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var live, gone []blocks.Block
	var batch []blocks.Block
	for i := 0; i < 3000; i++ {
		b := randBlock(t, 2000)
		batch = append(batch, b)
		if i%4 == 0 {
			live = append(live, b)
		} else {
			gone = append(gone, b)
		}
	}
	if err := s.Blockstore().PutMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for _, b := range gone {
		keys = append(keys, b.Cid().Hash())
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := segBytes(t, path)
	kills := 0
	for d := 2 * time.Millisecond; ; d *= 2 {
		finished := runKilled(t, "reclaim", path, d)
		s = mustOpen(t, path)
		checkBlocks(t, s, live, gone)
		s.Close()
		if finished {
			break
		}
		kills++
	}
	after := segBytes(t, path)
	t.Logf("reclaim killed %d times; segments %d -> %d bytes", kills, before, after)
	if kills == 0 {
		t.Fatal("the reclaim finished before the first kill: nothing tested")
	}
	if after > before/2 {
		t.Fatalf("segments %d -> %d bytes after reclaiming three quarters", before, after)
	}
}

// segBytes is what the store's segment files take.
func segBytes(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, f := range segFiles(t, path) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}
