// delegated.go: HTTP delegated IPNS publishing, Kubo 0.42's
// Ipns.DelegatedPublishers. A record goes to each publisher by the IPNS
// API of the Delegated Routing V1 HTTP API: PUT /routing/v1/ipns/{name},
// the name as a CIDv1 libp2p-key in base36, the body the record's
// protobuf with Content-Type application/vnd.ipfs.ipns-record, 200 OK
// for a record taken. One request per publisher: a few lines of net/http
// rather than boxo's routing client.
//
// Records go to the publishers (docs/names.md):
//   - on name publish --allow-delegated: kept in the local store and PUT to
//     the publishers, without the DHT or pubsub, online or not;
//   - on every publish and republish of an online node whose Routing.Type
//     is auto (or unset) or autoclient, alongside the DHT, as in Kubo's
//     default routing.
//
// As Kubo's HTTP routers do, a publisher that fails (an HTTP error, no
// answer within 15 s, no server) fails nothing: the failure is logged
// and the publish answers as the rest of it went.

package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/ipns"
)

const (
	routingV1IPNS  = "/routing/v1/ipns"
	ipnsRecordType = "application/vnd.ipfs.ipns-record"
	// autoIPNSPublisher is the IPNS publisher of Kubo 0.42's built-in
	// AutoConf defaults (boxo autoconf's mainnet fallback). It serves
	// the Amino DHT, so "auto" stands for it only on a node that runs no
	// DHT of its own.
	autoIPNSPublisher = "https://delegated-ipfs.dev" + routingV1IPNS
	// maxPublisherError bounds the body of an error answer kept for the
	// log, as boxo's routing client does.
	maxPublisherError = 1024
)

// delegatedTimeout bounds one PUT: Kubo's timeout of an HTTP router.
var delegatedTimeout = 15 * time.Second

// DelegatedPublishers returns Ipns.DelegatedPublishers as Kubo 0.42
// expands them, without trailing slashes. cairn fetches no AutoConf, so
// "auto" (once; more are dropped) stands for what it stands for in Kubo
// without a fetched AutoConf: nothing when AutoConf.Enabled is false or
// when Routing.Type runs the Amino DHT natively (unset, auto,
// autoclient, dht, dhtclient, dhtserver), else the public publisher
// https://delegated-ipfs.dev/routing/v1/ipns.
func DelegatedPublishers(c *config.Config) []string {
	var out []string
	auto := false
	for _, u := range c.Ipns.DelegatedPublishers {
		if u != config.AutoPlaceholder {
			out = append(out, strings.TrimRight(u, "/"))
			continue
		}
		if auto {
			continue
		}
		auto = true
		if c.AutoConf.Enabled == config.False {
			continue
		}
		typ := c.Routing.Type.WithDefault("auto")
		switch typ {
		case "auto", "autoclient", "dht", "dhtclient", "dhtserver":
		default:
			out = append(out, autoIPNSPublisher)
		}
	}
	return out
}

// delegatedPublishers returns the base URLs the records go to (each once),
// or why one of Ipns.DelegatedPublishers cannot be a publisher.
func delegatedPublishers(c *config.Config) ([]string, error) {
	var bases []string
	for _, u := range DelegatedPublishers(c) {
		b, err := publisherBase(u)
		if err != nil {
			return nil, fmt.Errorf("Ipns.DelegatedPublishers: %w", err)
		}
		if !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
	}
	return bases, nil
}

// publisherBase is the base URL of a publisher given as an http(s) URL
// with no path or the path /routing/v1/ipns (Kubo's forms).
func publisherBase(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" && p != routingV1IPNS {
		return "", fmt.Errorf("%q: unsupported routing path %q (a publisher is a base URL or ends in %s)", s, p, routingV1IPNS)
	}
	return u.Scheme + "://" + u.Host, nil
}

// delegatedKey marks a publish --allow-delegated; its value is the
// publishers' base URLs.
type delegatedKey struct{}

// putDelegated PUTs the IPNS record v under routing key k to every
// publisher at once and waits for them (each at most delegatedTimeout).
// Failures are logged: as in Kubo, they fail no publish.
func putDelegated(ctx context.Context, bases []string, k string, v []byte) {
	name, err := ipns.NameFromRoutingKey([]byte(k))
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, b := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := putIPNS(ctx, b, name, v); err != nil {
				log.Warnf("delegated IPNS publisher %s: %s", b, err)
			}
		}()
	}
	wg.Wait()
}

// putIPNS is one PUT /routing/v1/ipns/{name}.
func putIPNS(ctx context.Context, base string, name ipns.Name, rec []byte) error {
	ctx, cancel := context.WithTimeout(ctx, delegatedTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+routingV1IPNS+"/"+name.String(), bytes.NewReader(rec))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ipnsRecordType)
	req.Header.Set("User-Agent", AgentVersion())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxPublisherError))
		return fmt.Errorf("HTTP error with StatusCode=%d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPublisherError))
	return nil
}

// routedPublishers are the publishers the online routing puts the record
// of key k to (Kubo's default routing): none unless k is an IPNS key and
// Routing.Type is auto or autoclient.
func (n *Node) routedPublishers(k string) []string {
	nt := n.Net
	if nt == nil || !isIpnsKey(k) || (nt.RoutingType != "auto" && nt.RoutingType != "autoclient") {
		return nil
	}
	bases, err := delegatedPublishers(n.Config())
	if err != nil {
		log.Warnf("%s", err)
	}
	return bases
}

// alongsidePublishers runs put while the record v of key k goes to the
// routed publishers, and returns put's error.
func (n *Node) alongsidePublishers(ctx context.Context, k string, v []byte, put func() error) error {
	bases := n.routedPublishers(k)
	if len(bases) == 0 {
		return put()
	}
	done := make(chan struct{})
	go func() {
		putDelegated(ctx, bases, k, v)
		close(done)
	}()
	err := put()
	<-done
	return err
}
