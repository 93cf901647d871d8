// client.go: the RPC client the CLI uses to run a command on a daemon.

package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/files"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Client talks to one daemon.
type Client struct {
	base string // http://host:port
	auth string // Authorization header value, if any
	ua   string // User-Agent
	hc   *http.Client
}

// NewClient makes a client for an API multiaddr (/ip4|ip6|dns*/.../tcp/N,
// or /unix/path). authSecret is an --api-auth value (may be empty);
// userAgent is sent with every request.
func NewClient(apiAddr, authSecret, userAgent string) (*Client, error) {
	m, err := ma.NewMultiaddr(strings.TrimSpace(apiAddr))
	if err != nil {
		return nil, fmt.Errorf("invalid API address %q: %w", apiAddr, err)
	}
	c := &Client{ua: userAgent, hc: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	if authSecret != "" {
		hv, ok := config.AuthHeaderValue(authSecret)
		if !ok {
			return nil, fmt.Errorf("invalid --api-auth value %q", authSecret)
		}
		c.auth = hv
	}
	if p, err := m.ValueForProtocol(ma.P_UNIX); err == nil {
		c.base = "http://unix"
		c.hc.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", p)
		}}
		return c, nil
	}
	scheme := "http"
	for _, p := range m.Protocols() {
		if p.Code == ma.P_HTTPS || p.Code == ma.P_TLS {
			scheme = "https"
		}
	}
	var host, port string
	ma.ForEach(m, func(comp ma.Component) bool {
		switch comp.Protocol().Code {
		case ma.P_IP4, ma.P_DNS, ma.P_DNS4, ma.P_DNS6:
			host = comp.Value()
		case ma.P_IP6:
			host = "[" + comp.Value() + "]"
		case ma.P_TCP:
			port = comp.Value()
		}
		return true
	})
	if host == "" || port == "" {
		if _, _, err := manet.DialArgs(m); err != nil {
			return nil, fmt.Errorf("unsupported API address %q: %w", apiAddr, err)
		}
		return nil, fmt.Errorf("unsupported API address %q", apiAddr)
	}
	c.base = scheme + "://" + host + ":" + port
	return c, nil
}

// Response is a running command's reply.
type Response struct {
	resp   *http.Response
	cmd    *Command
	dec    *json.Decoder
	Bytes  bool  // a byte stream (read Body)
	Length int64 // X-Content-Length, -1 if absent
}

// ErrConnRefused reports that no daemon answered at the address.
var ErrConnRefused = errors.New("connection refused")

// Send runs cmd with args and options (raw strings, as on the command
// line) and an optional file tree sent as multipart.
func (c *Client) Send(ctx context.Context, cmd *Command, args []string, opts map[string]string, dir files.Directory) (*Response, error) {
	q := url.Values{}
	for k, v := range opts {
		q.Set(k, v)
	}
	return c.SendQuery(ctx, cmd, args, q, dir)
}

// SendQuery is Send with the options as a query, where a list option
// has one value per element.
func (c *Client) SendQuery(ctx context.Context, cmd *Command, args []string, opts url.Values, dir files.Directory) (*Response, error) {
	q := url.Values{}
	for _, a := range args {
		q.Add("arg", a)
	}
	for k, vs := range opts {
		q[k] = append([]string{}, vs...)
	}
	q.Set("encoding", "json")
	q.Set("stream-channels", "true")
	u := c.base + "/api/v0/" + cmd.Path + "?" + q.Encode()
	var body io.Reader
	ct := "application/octet-stream"
	if dir != nil {
		mfr := files.NewMultiFileReader(dir, true, false)
		body = mfr
		ct = "multipart/form-data; boundary=" + mfr.Boundary()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("User-Agent", c.ua)
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return nil, fmt.Errorf("%w: %v", ErrConnRefused, err)
		}
		return nil, err
	}
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	r := &Response{resp: resp, cmd: cmd, Length: -1}
	r.Bytes = resp.Header.Get("X-Stream-Output") == "1"
	if l := resp.Header.Get("X-Content-Length"); l != "" {
		if n, err := strconv.ParseInt(l, 10, 64); err == nil {
			r.Length = n
		}
	}
	r.dec = json.NewDecoder(bufio.NewReader(resp.Body))
	return r, nil
}

func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == 404 && mt == "text/plain" {
		return errors.New("command not found")
	}
	if mt == "application/json" {
		var we wireError
		if json.Unmarshal(b, &we) == nil && we.Type == "error" {
			return &Error{Message: we.Message, Code: we.Code}
		}
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	return errors.New(msg)
}

// Body is the byte stream of a byte-stream command.
func (r *Response) Body() io.Reader { return r.resp.Body }

// Next decodes the next value; io.EOF at the end.
func (r *Response) Next() (any, error) {
	if r.cmd.Type == nil {
		var v any
		if err := r.dec.Decode(&v); err != nil {
			return nil, r.endErr(err)
		}
		return v, nil
	}
	v := r.cmd.Type()
	if err := r.dec.Decode(v); err != nil {
		return nil, r.endErr(err)
	}
	return v, nil
}

func (r *Response) endErr(err error) error {
	if err == io.EOF {
		if e := r.Trailer(); e != nil {
			return e
		}
		return io.EOF
	}
	return err
}

// Trailer returns the X-Stream-Error trailer as an error (after EOF).
func (r *Response) Trailer() error {
	if msg := r.resp.Trailer.Get("X-Stream-Error"); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// Close releases the connection.
func (r *Response) Close() error { return r.resp.Body.Close() }

// Wait bounds how long the CLI waits for a daemon to answer a probe.
const Wait = 3 * time.Second
