// Package unixfs holds cairn's own UnixFS and dag-pb code where boxo's is
// too slow or too hungry for a board: the file layouts with leaves built
// and hashed on every core, and a dag-pb decoder that aliases a block's
// bytes instead of copying them. Every block and CID it makes is
// byte-identical to boxo's (the tests compare them), so the CIDs equal
// Kubo's. It knows nothing of the store, the node or the network: the
// importer hands it a boxo DAG builder and a DAG service.
//
//   - layout.go: BalancedLayout and TrickleLayout, boxo's layouts with
//     leaves cut in file order, built and hashed by GOMAXPROCS workers, at
//     most LeafOptions.Window chunks ahead; LeafWindow sizes that window
//     from the cores and the memory budget.
//   - leafenc.go: the leaf encoder that writes a raw or dag-pb leaf's
//     headers around a chunk already in its buffer.
//   - handback.go: Handback, which a DAG service embeds to give a leaf's
//     buffer back for reuse once it no longer holds its bytes.
//   - pbdecode.go: Decode (a dag-pb UnixFS node for the readers), Scan (the
//     Data field and links), LinkCids (only the link CIDs, for walks) and
//     DecodeLink.
package unixfs
