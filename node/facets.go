// facets.go: the facets of a Node, one per concept, as Kubo's coreapi
// hands out Pin(), Name(), Key(): each holds its concept's methods and
// state, and every facet reaches the node it belongs to.

package node

import (
	"sync"
	"sync/atomic"

	"github.com/ipfs/boxo/keystore"
	"github.com/ipfs/go-cid"
)

// Pins is the facet of the local pins: recursive, direct and indirect pins,
// their names, and the pin state of a CID (pins.go).
type Pins struct{ n *Node }

// Pins returns the node's Pins facet.
func (n *Node) Pins() *Pins { return &n.facets.pins }

// Keys is the facet of the keystore: named keys for IPNS and the node's
// identity (keys.go).
type Keys struct {
	n *Node
	// mu serialises keystore changes.
	mu sync.Mutex
	// ks is the keystore in <repo>/keystore, opened once.
	ks *keystore.FSKeystore
}

// Keys returns the node's Keys facet.
func (n *Node) Keys() *Keys { return &n.facets.keys }

// Names is the facet of IPNS and DNSLink: records, publishing, resolving and
// republishing (names.go, dns.go, republish.go).
type Names struct {
	n *Node
	// sys resolves and publishes IPNS names and DNSLink.
	sys nameSys
	// repubMu guards repub.
	repubMu sync.Mutex
	// repub is the republisher's last run.
	repub RepublishStats
}

// Names returns the node's Names facet.
func (n *Node) Names() *Names { return &n.facets.names }

// RemotePins is the facet of remote pinning services and the roots kept from
// GC while a remote service pins them (remotepin.go).
type RemotePins struct {
	n *Node
	// holdMu guards holds.
	holdMu sync.Mutex
	// holds are the DAG roots kept from GC for a while.
	holds map[cid.Cid]int
	// watches counts HoldUntil's background holds.
	watches atomic.Int32
}

// RemotePins returns the node's RemotePins facet.
func (n *Node) RemotePins() *RemotePins { return &n.facets.remotePins }

// UnixFS is the facet of files: importing (add), reading, listing, tar
// archives and the welcome documents (add.go, read.go, ls.go, tar.go,
// tarfmt.go, urlstore.go, welcome.go).
type UnixFS struct{ n *Node }

// UnixFS returns the node's UnixFS facet.
func (n *Node) UnixFS() *UnixFS { return &n.facets.unixFS }

// Dag is the facet of IPLD DAGs: paths, walks, CAR export and import, edits
// and verification (dagpath.go, walk.go, car.go, edit.go, verify.go,
// resolve.go).
type Dag struct{ n *Node }

// Dag returns the node's Dag facet.
func (n *Node) Dag() *Dag { return &n.facets.dag }

// Block is the facet of single blocks through the one read path: get, size,
// put, remove, verify (block.go, session.go, verify.go).
type Block struct{ n *Node }

// Block returns the node's Block facet.
func (n *Node) Block() *Block { return &n.facets.block }

// Storage is the facet of the store as a whole: write sessions, the
// StorageMax cap, usage, garbage collection and the filestore (session.go,
// gc.go, filestore.go).
type Storage struct {
	n *Node
	// gc is the running or last GC (gc.go).
	gc gcState
	// sess is the open write sessions (session.go).
	sess sessions
}

// Storage returns the node's Storage facet.
func (n *Node) Storage() *Storage { return &n.facets.storage }

// Network is the facet of the node's side of the network layer (package
// p2p): IPNS over pubsub, bandwidth, peers, p2p forwarding and providing
// (net.go, p2pmount.go, provide.go).
type Network struct{ n *Node }

// Network returns the node's Network facet.
func (n *Node) Network() *Network { return &n.facets.network }

// ConfigFile is the facet of the repo's config file as a JSON document:
// read, replace, update, profiles and the Mounts section (configstore.go,
// mounts.go).
type ConfigFile struct{ n *Node }

// ConfigFile returns the node's ConfigFile facet.
func (n *Node) ConfigFile() *ConfigFile { return &n.facets.configFile }

// facets holds a Node's facets (initFacets sets them).
type facets struct {
	pins       Pins
	keys       Keys
	names      Names
	remotePins RemotePins
	unixFS     UnixFS
	dag        Dag
	block      Block
	storage    Storage
	network    Network
	configFile ConfigFile
}

// initFacets points every facet at n.
func (n *Node) initFacets() {
	n.facets.pins.n = n
	n.facets.keys.n = n
	n.facets.names.n = n
	n.facets.remotePins.n = n
	n.facets.unixFS.n = n
	n.facets.dag.n = n
	n.facets.block.n = n
	n.facets.storage.n = n
	n.facets.network.n = n
	n.facets.configFile.n = n
}
