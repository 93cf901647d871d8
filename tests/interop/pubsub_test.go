//go:build interop

// pubsub_test.go: pubsub between cairn and Kubo on loopback, with
// gossipsub (both defaults) and with floodsub (Pubsub.Router on both):
// messages published on either arrive at subscribers on both with Kubo
// 0.42's fields, each publisher's messages in its order, and pubsub/peers
// on each lists the other.

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"cairn/internal/daemon"

	mbase "github.com/multiformats/go-multibase"
)

// psMessage is one line of pubsub/sub, as Kubo 0.42 writes it.
type psMessage struct {
	From     string   `json:"from"`
	Data     string   `json:"data"`
	Seqno    string   `json:"seqno"`
	TopicIDs []string `json:"topicIDs"`
}

// mb64 is s in multibase base64url, as Kubo 0.42's clients send topics.
func mb64(s string) string {
	enc, _ := mbase.EncoderByName("base64url")
	return enc.Encode([]byte(s))
}

// psSubscribe runs pubsub/sub on d and returns its messages; the
// subscription ends at cleanup.
func psSubscribe(t *testing.T, d *daemon.Daemon, topic string) <-chan psMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", d.URL+"/api/v0/pubsub/sub?arg="+url.QueryEscape(mb64(topic)), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s pubsub/sub: %v", d.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("%s pubsub/sub: %s", d.Name, resp.Status)
	}
	out := make(chan psMessage, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var m psMessage
			if err := dec.Decode(&m); err != nil {
				return
			}
			out <- m
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return out
}

// psPublish publishes data to topic on d as Kubo 0.42's clients do: the
// topic in multibase, the data as the body's file part.
func psPublish(t *testing.T, d *daemon.Daemon, topic string, data []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "")
	w.Write(data)
	mw.Close()
	if _, err := d.Post("pubsub/pub", url.Values{"arg": {mb64(topic)}}, &body, mw.FormDataContentType()); err != nil {
		t.Errorf("%s pubsub/pub: %v", d.Name, err)
	}
}

// psPeers is pubsub/peers on d (of topic, or all when "").
func psPeers(t *testing.T, d *daemon.Daemon, topic string) []string {
	t.Helper()
	q := url.Values{}
	if topic != "" {
		q.Set("arg", mb64(topic))
	}
	var out struct{ Strings []string }
	if err := d.JSON("pubsub/peers", q, &out); err != nil {
		t.Fatal(err)
	}
	return out.Strings
}

// waitPubsubPeer waits until d's pubsub/peers of topic lists pid (the
// subscription of pid's node has reached d).
func waitPubsubPeer(t *testing.T, d *daemon.Daemon, topic, pid string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !slices.Contains(psPeers(t, d, topic), pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s pubsub/peers %q never listed %s: %v", d.Name, topic, pid, psPeers(t, d, topic))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// psPayload is message i of a phase of the publisher called who: text,
// then bytes that are not valid UTF-8, so the data must travel in
// multibase.
func psPayload(phase, who string, i int) []byte {
	return append([]byte(fmt.Sprintf("%s %s %03d ", phase, who, i)), 0x00, 0xff, 0xfe, byte(i))
}

// psReader checks what one subscriber receives: every message is from a
// known publisher, on the topic, with multibase data and an 8-byte
// seqno above the last one of its publisher.
type psReader struct {
	t       *testing.T
	name    string // the subscriber's node
	msgs    <-chan psMessage
	topic   string
	authors map[string]string // peer ID -> publisher name
	lastSeq map[string]uint64
	seen    map[string]bool // Kubo's subscriber: seqnos delivered
}

// next returns the next message's publisher and data.
func (r *psReader) next() (string, []byte) {
	r.t.Helper()
	var m psMessage
	select {
	case m = <-r.msgs:
	case <-time.After(time.Minute):
		r.t.Fatalf("%s's subscriber: no message within a minute", r.name)
	}
	who, ok := r.authors[m.From]
	if !ok {
		r.t.Fatalf("%s's subscriber: message from %q, not one of %v", r.name, m.From, r.authors)
	}
	if want := []string{mb64(r.topic)}; !slices.Equal(m.TopicIDs, want) {
		r.t.Errorf("%s's subscriber: topicIDs %v, want %v", r.name, m.TopicIDs, want)
	}
	enc, data, err := mbase.Decode(m.Data)
	if err != nil || enc != mbase.Base64url {
		r.t.Fatalf("%s's subscriber: data %q is not multibase base64url: %v", r.name, m.Data, err)
	}
	enc, seq, err := mbase.Decode(m.Seqno)
	if err != nil || enc != mbase.Base64url || len(seq) != 8 {
		r.t.Fatalf("%s's subscriber: seqno %q is not 8 bytes in multibase base64url: %v", r.name, m.Seqno, err)
	}
	s := binary.BigEndian.Uint64(seq)
	if r.name == "kubo" {
		// Kubo validates asynchronously: it may deliver a publisher's
		// messages out of order, but never one twice.
		if r.seen[m.Seqno] {
			r.t.Fatalf("%s's subscriber: seqno %d from %s twice", r.name, s, who)
		}
		r.seen[m.Seqno] = true
		return who, data
	}
	if s <= r.lastSeq[who] {
		r.t.Fatalf("%s's subscriber: seqno %d from %s after %d (a replay or a reordering)", r.name, s, who, r.lastSeq[who])
	}
	r.lastSeq[who] = s
	return who, data
}

func TestInterop_Pubsub(t *testing.T) {
	for _, router := range []string{"gossipsub", "floodsub"} {
		t.Run(router, func(t *testing.T) { testPubsubBothWays(t, router) })
	}
}

// testPubsubBothWays: cairn (enabled by the daemon flag) and Kubo (by
// Pubsub.Enabled), both with router, subscribe to one topic. Each
// publishes in turn, waiting for its message at both subscribers, which
// must get it with from, data, seqno and topicIDs as sent. Then both
// publish a burst at the same time: each publisher's messages arrive in
// its order at both, and all of them at cairn's subscriber.
func testPubsubBothWays(t *testing.T, router string) {
	const lockstep, burst = 20, 100
	routerCfg := fmt.Sprintf("%q", router)
	c := startCairn(t, daemon.Options{Config: map[string]string{"Pubsub.Router": routerCfg}, Args: []string{"--enable-pubsub-experiment"}})
	k := startKubo(t, daemon.Options{Config: map[string]string{"Pubsub.Enabled": "true", "Pubsub.Router": routerCfg}})
	connect(t, c, k)
	cid, kid := id(t, c).ID, id(t, k).ID
	topic := "cairn interop/" + router + " ✓"
	authors := map[string]string{cid: "cairn", kid: "kubo"}
	daemons := map[string]*daemon.Daemon{"cairn": c, "kubo": k}
	readers := map[string]*psReader{}
	for name, d := range daemons {
		readers[name] = &psReader{t: t, name: name, msgs: psSubscribe(t, d, topic), topic: topic, authors: authors, lastSeq: map[string]uint64{}, seen: map[string]bool{}}
	}
	// Each learns the other's subscription before anything is published.
	waitPubsubPeer(t, c, topic, kid)
	waitPubsubPeer(t, k, topic, cid)
	if p := psPeers(t, c, ""); !slices.Contains(p, kid) {
		t.Errorf("cairn pubsub/peers: %v, want Kubo's %s", p, kid)
	}
	if p := psPeers(t, k, ""); !slices.Contains(p, cid) {
		t.Errorf("Kubo pubsub/peers: %v, want cairn's %s", p, cid)
	}
	for _, d := range daemons {
		var ls struct{ Strings []string }
		if err := d.JSON("pubsub/ls", nil, &ls); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ls.Strings, []string{mb64(topic)}) {
			t.Errorf("%s pubsub/ls: %v, want [%s]", d.Name, ls.Strings, mb64(topic))
		}
	}

	// In turn: each message reaches both subscribers before the next.
	for i := 0; i < lockstep; i++ {
		for _, who := range []string{"cairn", "kubo"} {
			want := psPayload("lockstep", who, i)
			psPublish(t, daemons[who], topic, want)
			for _, r := range readers {
				if from, data := r.next(); from != who || !bytes.Equal(data, want) {
					t.Fatalf("%s's subscriber: %q from %s, want %q from %s", r.name, data, from, want, who)
				}
			}
		}
	}

	// A burst from both at once.
	var wg sync.WaitGroup
	for who, d := range daemons {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < burst; i++ {
				psPublish(t, d, topic, psPayload("burst", who, i))
			}
		}()
	}
	wg.Wait()
	for _, r := range readers {
		// Each publisher's messages in its order (the seqno check of
		// next), up to its last, which no validator drops.
		got := map[string]int{}
		next := map[string]int{}
		for next["cairn"] < burst || next["kubo"] < burst {
			who, data := r.next()
			i := next[who]
			if r.name == "kubo" {
				// Out of order is possible here (see next): any message
				// of the burst counts; the last one ends the wait.
				i = 0
			}
			for i < burst && !bytes.Equal(data, psPayload("burst", who, i)) {
				i++
			}
			if i == burst {
				t.Fatalf("%s's subscriber: %q from %s is none of its burst after message %d", r.name, data, who, next[who])
			}
			if i+1 > next[who] {
				next[who] = i + 1
			}
			got[who]++
		}
		t.Logf("%s's subscriber got %d of cairn's and %d of Kubo's %d messages of the burst, each publisher's in order", r.name, got["cairn"], got["kubo"], burst)
		// cairn validates in arrival order and keeps a burst of 128;
		// Kubo validates asynchronously, so of another node's burst it
		// may check a later seqno first and drop the earlier ones.
		if r.name == "cairn" && (got["cairn"] != burst || got["kubo"] != burst) {
			t.Errorf("cairn's subscriber lost messages of the burst")
		}
		if got[r.name] != burst {
			t.Errorf("%s's subscriber lost messages its own node published", r.name)
		}
	}
}
