// gateway.go: the HTTP gateway's figures: a whole file, a range in its
// middle (time to first byte), the file as a CAR, and the HTML listing
// of a directory of many entries.

package benchutil

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"time"

	"cairn/internal/daemon"
)

// ErrNoGateway is what MeasureGateway returns when nothing listens on the
// daemon's gateway address.
var ErrNoGateway = errors.New("no gateway")

// GatewayConfig is the daemon config that puts its gateway on a free
// port of 127.0.0.1 (merged into o.Config), and that gateway's base URL.
func GatewayConfig(o *daemon.Options) (string, error) {
	port, err := daemon.FreePort()
	if err != nil {
		return "", err
	}
	if o.Config == nil {
		o.Config = map[string]string{}
	}
	o.Config["Addresses.Gateway"] = fmt.Sprintf(`"/ip4/127.0.0.1/tcp/%d"`, port)
	return fmt.Sprintf("http://127.0.0.1:%d", port), nil
}

// GatewayFigures is one run of MeasureGateway.
type GatewayFigures struct {
	File    float64 // GET of the whole file, MiB/s
	RangeMs float64 // time to first byte of a 1 MiB range in the file's middle, ms (median of 5)
	CAR     float64 // GET ?format=car of the file, MiB/s (of the file's size)
	DirMs   float64 // GET of the directory's HTML listing, ms
}

// gatewayClient reads answers as they come: no compression to undo, no
// timeout but the request's own.
var gatewayClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}

// MeasureGateway times the gateway at gw on the file root (size bytes)
// and the directory dir of entries files (AddDir), reading every answer into io.Discard with
// net/http. It waits up to 5 s for the gateway to listen, and returns
// ErrNoGateway when it does not.
func MeasureGateway(gw, root, dir string, entries int, size int64) (GatewayFigures, error) {
	var g GatewayFigures
	u, err := url.Parse(gw)
	if err != nil {
		return g, err
	}
	if !listening(u.Host, 5*time.Second) {
		return g, fmt.Errorf("%w on %s", ErrNoGateway, u.Host)
	}
	t0 := time.Now()
	if err := getAll(gw+"/ipfs/"+root, nil, http.StatusOK, size); err != nil {
		return g, err
	}
	g.File = MiBs(size, time.Since(t0))
	var ttfb []float64
	for range 5 {
		ms, err := rangeTTFB(gw+"/ipfs/"+root, size/2, 1<<20)
		if err != nil {
			return g, err
		}
		ttfb = append(ttfb, ms)
	}
	g.RangeMs = Median(ttfb)
	t0 = time.Now()
	if err := getAll(gw+"/ipfs/"+root+"?format=car", nil, http.StatusOK, size); err != nil {
		return g, err
	}
	g.CAR = MiBs(size, time.Since(t0))
	t0 = time.Now()
	// Each entry's name is in the listing at least once.
	if err := getAll(gw+"/ipfs/"+dir+"/", http.Header{"Accept": {"text/html"}}, http.StatusOK, int64(entries*len("f00000"))); err != nil {
		return g, err
	}
	g.DirMs = float64(time.Since(t0).Microseconds()) / 1000
	return g, nil
}

// getAll GETs u and reads the whole answer, which must have status want
// and at least min bytes.
func getAll(u string, h http.Header, want int, min int64) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	copyHeader(req.Header, h)
	resp, err := gatewayClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: after %d bytes: %w", u, n, err)
	}
	if resp.StatusCode != want || n < min {
		return fmt.Errorf("GET %s: status %d, %d bytes; want %d and at least %d bytes", u, resp.StatusCode, n, want, min)
	}
	return nil
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

// rangeTTFB asks for n bytes at off and returns the milliseconds until the
// first byte of the body arrived; the answer must be a 206 of n bytes.
func rangeTTFB(u string, off, n int64) (float64, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	t0 := time.Now()
	resp, err := gatewayClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
		return 0, fmt.Errorf("range GET %s: %w", u, err)
	}
	ms := float64(time.Since(t0).Microseconds()) / 1000
	rest, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusPartialContent || rest+1 != n {
		return 0, fmt.Errorf("range GET %s: status %d, %d bytes; want 206 and %d bytes", u, resp.StatusCode, rest+1, n)
	}
	return ms, nil
}

// listening waits up to wait for addr to accept a TCP connection.
func listening(addr string, wait time.Duration) bool {
	for t0 := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		if time.Since(t0) > wait {
			return false
		}
	}
}

// AddDir adds a directory named name holding n small files (f00000,
// f00001, ...; each holds its own name) in one multipart request, and
// returns the directory's CID.
func AddDir(url, query, name string, n int) (string, error) {
	return addParts(url, query, func(mw *multipart.Writer) error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
		h.Set("Content-Type", "application/x-directory")
		if _, err := mw.CreatePart(h); err != nil {
			return err
		}
		for i := range n {
			f := fmt.Sprintf("f%05d", i)
			w, err := mw.CreateFormFile("file", name+"/"+f)
			if err != nil {
				return err
			}
			if _, err := w.Write([]byte(f)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DirEntries is the size of the directory whose listing is timed.
const DirEntries = 10000

// GatewayLines are the gateway's lines of a table (goals of the gateway's
// issue: twice Kubo's throughput, a range's first byte no later, a third
// of its memory; the listing is reported without a goal).
func GatewayLines(mib int64) []*Figure {
	return []*Figure{
		{Name: fmt.Sprintf("gateway GET %d MiB file", mib), Unit: "MiB/s", Goal: 2},
		{Name: "gateway Range 1 MiB mid-file, first byte", Unit: "ms", Goal: 1, Lower: true},
		{Name: fmt.Sprintf("gateway GET ?format=car %d MiB", mib), Unit: "MiB/s", Goal: 2},
		{Name: fmt.Sprintf("gateway HTML listing, %d entries", DirEntries), Unit: "ms"},
		{Name: "peak RssAnon over the gateway GETs", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
	}
}

// GatewayRun is one daemon's run of RunGateway.
type GatewayRun struct {
	GatewayFigures
	Peak float64 // RssAnon, MiB
	None bool    // the daemon serves no gateway
}

// RunGateway adds a directory of DirEntries files to d, then times d's
// gateway at gw on the file root (size bytes) and on that directory while
// sampling d's RssAnon. A daemon without a gateway is noted (None), not
// failed.
func RunGateway(d *daemon.Daemon, gw, root string, size int64) (GatewayRun, error) {
	var r GatewayRun
	dir, err := AddDir(d.URL, "pin=true&quieter=true", "listing", DirEntries)
	if err != nil {
		return r, fmt.Errorf("add of a %d-entry directory: %w", DirEntries, err)
	}
	s := Sample(d.Pid(), 50*time.Millisecond, "RssAnon")
	r.GatewayFigures, err = MeasureGateway(gw, root, dir, DirEntries, size)
	r.Peak = float64(s.Done()[0]) / 1024
	if errors.Is(err, ErrNoGateway) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", d.Name, err)
		return GatewayRun{None: true}, nil
	}
	return r, err
}

// AddTo appends the run to the lines of GatewayLines as impl's ("cairn"
// or "kubo"), or notes that impl has no gateway.
func (r GatewayRun) AddTo(lines []*Figure, impl string) {
	if r.None {
		lines[0].Note = impl + ": no gateway on Addresses.Gateway"
		return
	}
	if r.File == 0 {
		return // the phase did not run
	}
	for i, v := range []float64{r.File, r.RangeMs, r.CAR, r.DirMs, r.Peak} {
		if impl == "cairn" {
			lines[i].Cairn = append(lines[i].Cairn, v)
		} else {
			lines[i].Kubo = append(lines[i].Kubo, v)
		}
	}
}
