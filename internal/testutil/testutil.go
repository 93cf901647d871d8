package testutil

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

// MustInitRepo creates a repo with the test profile in a temp dir.
func MustInitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := node.Init(dir, "test"); err != nil {
		t.Fatalf("init: %v", err)
	}
	return dir
}

// MustOpenNode opens a node on a fresh test repo, closed at cleanup.
func MustOpenNode(t testing.TB) *node.Node {
	t.Helper()
	n, err := node.New(MustInitRepo(t), nil)
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// Server is an RPC server on loopback for tests.
type Server struct {
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	Node *node.Node
	Srv  *rpc.Server
}

// StartServer serves n's RPC on 127.0.0.1:0 until cleanup.
func StartServer(t testing.TB, n *node.Node) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := &rpc.Env{Table: commands.DefaultTable, Shutdown: func() {}}
	srv := rpc.NewServer(n, commands.DefaultTable, env, rpc.ServerOptions{ServerHeader: "cairn/" + node.Version})
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return &Server{URL: "http://" + l.Addr().String(), Addr: l.Addr().String(), Node: n, Srv: srv}
}

// KuboVectors returns the path of the Kubo 0.42 reference CIDs
// (kubo-cids.json): $CAIRN_SHARED/vectors/kubo-cids.json when CAIRN_SHARED
// is set, else tests/testdata/kubo/kubo-cids.json in this repository (see
// the README there for where they came from).
func KuboVectors(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("CAIRN_SHARED"); d != "" {
		return filepath.Join(d, "vectors", "kubo-cids.json")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the test directory")
		}
		dir = parent
	}
	return filepath.Join(dir, "tests", "testdata", "kubo", "kubo-cids.json")
}

// OverwriteBlock replaces the stored bytes of the block with multihash key
// behind the store's back (to test corruption detection), in place in its
// segment file; data must be as long as the block.
func OverwriteBlock(t testing.TB, st *storage.Store, key, data []byte) {
	t.Helper()
	file, off, n, err := st.BlockFile(key)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(data) {
		t.Fatalf("OverwriteBlock: block is %d bytes, data %d", n, len(data))
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

// FlipBit flips one bit in the middle of the stored bytes of the block
// with multihash key, behind the store's back (a bit flipped on the card),
// and returns the damaged bytes around it (up to 256 each side), which no
// reader may ever serve.
func FlipBit(t testing.TB, st *storage.Store, key []byte) []byte {
	t.Helper()
	file, off, n, err := st.BlockFile(key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, n)
	if _, err := f.ReadAt(data, off); err != nil {
		t.Fatal(err)
	}
	mid := n / 2
	data[mid] ^= 0x04
	if _, err := f.WriteAt(data[mid:mid+1], off+int64(mid)); err != nil {
		t.Fatal(err)
	}
	return data[max(0, mid-256):min(n, mid+257)]
}

// MustOnlineNode opens a node on a fresh test repo and starts its network
// layer on loopback only. routing is Routing.Type ("none", "dhtclient",
// "dhtserver", ...); edit, if set, changes the config document first. The
// node is refused if its config could reach beyond loopback.
func MustOnlineNode(t testing.TB, routing string, edit func(doc map[string]any)) *node.Node {
	t.Helper()
	dir := MustInitRepo(t)
	doc, err := config.ReadDoc(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := config.SetKey(doc, "Routing.Type", routing); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(doc)
	}
	if err := config.WriteDoc(dir, doc); err != nil {
		t.Fatal(err)
	}
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	cfg := n.Config()
	if len(cfg.Bootstrap) != 0 || cfg.Discovery.MDNS.Enabled || !cfg.Swarm.DisableNatPortMap {
		t.Fatalf("test node config reaches beyond loopback: %+v %+v", cfg.Bootstrap, cfg.Discovery)
	}
	for _, a := range cfg.Addresses.Swarm {
		if !strings.HasPrefix(a, "/ip4/127.0.0.1/") && !strings.HasPrefix(a, "/ip6/::1/") {
			t.Fatalf("test node swarm address %q is not loopback", a)
		}
	}
	if err := n.StartNet(context.Background(), node.NetOptions{UserAgent: "cairn-test"}); err != nil {
		t.Fatalf("start net: %v", err)
	}
	return n
}

// SetConfig sets dotted config keys on an open node, through
// n.ConfigFile().Update as the config commands do (the node's config is
// never changed in place).
func SetConfig(t testing.TB, n *node.Node, kv map[string]any) {
	t.Helper()
	if err := n.ConfigFile().Update(func(doc map[string]any) error {
		for k, v := range kv {
			if err := config.SetKey(doc, k, v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// P2PAddr is the node's first listen address with /p2p/<id>.
func P2PAddr(t testing.TB, n *node.Node) string {
	t.Helper()
	addrs := n.Net.Host.Network().ListenAddresses()
	if len(addrs) == 0 {
		t.Fatal("node has no listen address")
	}
	return addrs[0].String() + "/p2p/" + n.PeerID.String()
}

// PostURL posts an empty body to url with the headers hdr and returns the
// answer with its body read whole.
func PostURL(t testing.TB, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// WriteSchema1Store writes a schema-1 store at path holding n random blocks of
// 1-8 KB and the given records, as the store before schema 2 laid it out
// (block bytes in a nested bucket each under a sequence number, an index
// from multihash to sequence number).
func WriteSchema1Store(t testing.TB, path string, n int, recs map[string]string) []blocks.Block {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []blocks.Block
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket([]byte("meta"))
		idx, _ := tx.CreateBucket([]byte("index"))
		data, _ := tx.CreateBucket([]byte("blocks"))
		dsb, _ := tx.CreateBucket([]byte("data"))
		var size uint64
		for i := 0; i < n; i++ {
			b := randomBlock(t, 1000+(i*97)%7000)
			seq, _ := data.NextSequence()
			k := binary.BigEndian.AppendUint64(nil, seq)
			sub, err := data.CreateBucket(k)
			if err != nil {
				return err
			}
			if err := sub.Put([]byte("d"), b.RawData()); err != nil {
				return err
			}
			if err := idx.Put(b.Cid().Hash(), k); err != nil {
				return err
			}
			size += uint64(len(b.RawData()))
			out = append(out, b)
		}
		for k, v := range recs {
			dsb.Put([]byte(k), []byte(v))
		}
		meta.Put([]byte("version"), binary.BigEndian.AppendUint32(nil, 1))
		meta.Put([]byte("blocks.n"), binary.BigEndian.AppendUint64(nil, uint64(n)))
		meta.Put([]byte("blocks.size"), binary.BigEndian.AppendUint64(nil, size))
		meta.Put([]byte("written"), binary.BigEndian.AppendUint64(nil, 1<<20))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func randomBlock(t testing.TB, n int) blocks.Block {
	t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	h, _ := mh.Sum(data, mh.SHA2_256, -1)
	b, err := blocks.NewBlockWithCid(data, cid.NewCidV1(cid.Raw, h))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
