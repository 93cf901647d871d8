// Command cairn is a Kubo-compatible IPFS node for small boards.
//
// With a daemon running (an api file in the repo, or --api), commands are
// sent to it over the RPC; without one they open the repo and run here.
package main
