package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"cairn/internal/memtarget"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

func rssAnon() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssAnon:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func main() {
	dir := flag.String("dir", "", "directory of the store (created if missing)")
	n := flag.Int("blocks", 100000, "random blocks to put (0: only open and close)")
	size := flag.Int("size", 1024, "bytes per block")
	lagBlocks := flag.Int("lag-blocks", 0, "storage.Options.IndexLagBlocks (0: default)")
	batch := flag.Int("batch", 0, "storage.Options.MaxBatchBytes (0: default; the queue is twice it)")
	target := flag.Bool("memtarget", false, "apply the daemon's memory target (24 MiB)")
	verify := flag.Bool("verify", false, "then read every block back and check its hash (storage.Check)")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "storescale:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "storescale:", err)
			os.Exit(1)
		}
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "storescale: -dir is required")
		os.Exit(2)
	}
	err := run(*dir, *n, *size, *lagBlocks, *batch, *target, *verify)
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storescale:", err)
		os.Exit(1)
	}
}

func run(dir string, n, size, lagBlocks, batch int, target, verify bool) error {
	if target {
		defer memtarget.Start(24<<20, 0).Stop()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, storage.FileName)
	o := &storage.Options{IndexLagBlocks: lagBlocks, MaxBatchBytes: batch, MaxPendingBytes: 2 * batch}
	t0 := time.Now()
	s, err := storage.Open(path, o)
	if err != nil {
		return err
	}
	fmt.Printf("open: %s, RssAnon %s\n", time.Since(t0).Round(time.Microsecond), rssAnon())
	if n > 0 {
		bs, bt := s.Blockstore(), s.NewBatch()
		t1 := time.Now()
		for i := 0; i < n; i++ {
			data := make([]byte, size)
			rand.Read(data)
			h, _ := mh.Sum(data, mh.SHA2_256, -1)
			b, _ := blocks.NewBlockWithCid(data, cid.NewCidV1(cid.Raw, h))
			if err := bs.PutAsync(bt, b); err != nil {
				return err
			}
		}
		if err := bt.Sync(); err != nil {
			return err
		}
		d := time.Since(t1)
		fmt.Printf("put %d blocks of %d bytes: %s, %.0f blocks/s, RssAnon %s\n", n, size, d.Round(time.Millisecond), float64(n)/d.Seconds(), rssAnon())
	}
	st, err := s.Stat()
	if err != nil {
		return err
	}
	disk, err := storage.DiskBytes(path)
	if err != nil {
		return err
	}
	fmt.Printf("store: %d blocks, %d bytes held, %d on disk (%.2f per byte), index file %d bytes, %d segments\n",
		st.NumBlocks, st.BlockBytes, disk, float64(disk)/float64(max(st.BlockBytes, 1)), st.IndexBytes, st.Segments)
	if verify {
		t3 := time.Now()
		errs := s.Check(storage.CheckOptions{VerifyHashes: true})
		fmt.Printf("verify: every block read back and re-hashed in %s, %d problems, RssAnon %s\n", time.Since(t3).Round(time.Millisecond), len(errs), rssAnon())
		for i, e := range errs {
			if i == 10 {
				break
			}
			fmt.Println("  ", e)
		}
		if len(errs) > 0 {
			s.Close()
			return fmt.Errorf("%d problems", len(errs))
		}
	}
	t2 := time.Now()
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Printf("close: %s\n", time.Since(t2).Round(time.Microsecond))
	return nil
}
