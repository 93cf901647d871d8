// profile.go: the collectors of diag/profile, named and filed in the zip
// as Kubo 0.42's profile package does, so that its debug guide applies.

package commands

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// profileCollectorNames are the collectors, in Kubo's default order.
var profileCollectorNames = []string{
	"goroutines-stack", "goroutines-pprof", "version", "heap", "allocs", "bin", "cpu", "mutex", "block", "trace",
}

type profileOptions struct {
	Collectors           []string
	ProfileDuration      time.Duration
	MutexProfileFraction int
	BlockProfileRate     time.Duration
}

// profileCollector writes one file of the zip.
type profileCollector struct {
	file    string
	enabled func(o profileOptions) bool // nil: always
	collect func(ctx context.Context, o profileOptions, w io.Writer) error
}

func sampling(o profileOptions) bool { return o.ProfileDuration > 0 }

var profileCollectors = map[string]profileCollector{
	"goroutines-stack": {file: "goroutines.stacks", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		return pprof.Lookup("goroutine").WriteTo(w, 2)
	}},
	"goroutines-pprof": {file: "goroutines.pprof", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		return pprof.Lookup("goroutine").WriteTo(w, 0)
	}},
	"version": {file: "version.json", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		return json.NewEncoder(w).Encode(versionInfo())
	}},
	"heap": {file: "heap.pprof", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		return pprof.Lookup("heap").WriteTo(w, 0)
	}},
	"allocs": {file: "allocs.pprof", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		return pprof.Lookup("allocs").WriteTo(w, 0)
	}},
	"bin": {file: "cairn", collect: func(_ context.Context, _ profileOptions, w io.Writer) error {
		p, err := os.Executable()
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	}},
	"cpu": {file: "cpu.pprof", enabled: sampling, collect: func(ctx context.Context, o profileOptions, w io.Writer) error {
		if err := pprof.StartCPUProfile(w); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
		return sleepCtx(ctx, o.ProfileDuration)
	}},
	"mutex": {file: "mutex.pprof", enabled: func(o profileOptions) bool { return sampling(o) && o.MutexProfileFraction > 0 },
		collect: func(ctx context.Context, o profileOptions, w io.Writer) error {
			prev := runtime.SetMutexProfileFraction(o.MutexProfileFraction)
			defer runtime.SetMutexProfileFraction(prev)
			if err := sleepCtx(ctx, o.ProfileDuration); err != nil {
				return err
			}
			return pprof.Lookup("mutex").WriteTo(w, 2)
		}},
	"block": {file: "block.pprof", enabled: func(o profileOptions) bool { return sampling(o) && o.BlockProfileRate > 0 },
		collect: func(ctx context.Context, o profileOptions, w io.Writer) error {
			runtime.SetBlockProfileRate(int(o.BlockProfileRate.Nanoseconds()))
			defer runtime.SetBlockProfileRate(0)
			if err := sleepCtx(ctx, o.ProfileDuration); err != nil {
				return err
			}
			return pprof.Lookup("block").WriteTo(w, 2)
		}},
	"trace": {file: "trace", enabled: sampling, collect: func(ctx context.Context, o profileOptions, w io.Writer) error {
		if err := trace.Start(w); err != nil {
			return err
		}
		defer trace.Stop()
		return sleepCtx(ctx, o.ProfileDuration)
	}},
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeProfiles runs the chosen collectors and writes a zip of their
// files to w. Sampling collectors run side by side for the profile time;
// each one's output is held in a temporary file (the binary alone is
// tens of MB, more than a board should hold in memory).
func writeProfiles(ctx context.Context, w io.Writer, o profileOptions) error {
	var run []profileCollector
	for _, name := range o.Collectors {
		c, ok := profileCollectors[name]
		if !ok {
			return fmt.Errorf("unknown collector '%s'", name)
		}
		if c.enabled == nil || c.enabled(o) {
			run = append(run, c)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		c   profileCollector
		f   *os.File
		err error
	}
	results := make(chan result, len(run))
	for _, c := range run {
		go func() {
			f, err := os.CreateTemp("", "cairn-profile-*")
			if err == nil {
				_ = os.Remove(f.Name())
				err = c.collect(ctx, o, f)
			}
			results <- result{c, f, err}
		}()
	}
	zw := zip.NewWriter(w)
	var firstErr error
	for range run {
		res := <-results
		if res.f != nil {
			if res.err == nil && firstErr == nil {
				res.err = addZipFile(zw, res.c.file, res.f)
			}
			res.f.Close()
		}
		if res.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("generating profile data for %q: %w", res.c.file, res.err)
			cancel()
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return zw.Close()
}

func addZipFile(zw *zip.Writer, name string, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	zf, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(zf, f)
	return err
}
