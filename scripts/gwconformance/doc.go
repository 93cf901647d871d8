// Command gwconformance runs the official HTTP gateway test suite,
// github.com/ipfs/gateway-conformance v0.13.1, against Kubo v0.43.1 and
// against cairn, and fails when a case passes on Kubo but not on cairn
// unless tests/gateway-conformance/differences.txt lists it with its reason
// (make gateway-conformance; docs/gateway.md, "Conformance").
//
// Each node runs offline on a fresh test-profile repo, inside a network
// namespace with only loopback up (internal/daemon.EnterNetNS), its gateway
// on 127.0.0.1:8080 of that namespace, provisioned as Kubo's own CI
// provisions Kubo: the suite's fixtures extracted with --merged=true,
// fixtures.car imported with dag import --pin-roots=false, every
// *.ipns-record put with routing put --allow-offline under the name its file
// starts with, the DNSLink map in IPFS_NS_MAP, Gateway.PublicGateways for
// localhost and example.com (subdomains, inlined DNSLink, /ipfs and /ipns).
// The suite runs with --subdomain-url http://localhost:8080 and Kubo's CI's
// one skip (CAR Content-Length). A node without a gateway on its
// Addresses.Gateway is reported so, and each of its cases counts as failed.
//
// Files:
//
//	main.go    flags, provisioning and running the suite per node, the verdict
//	report.go  the suite's report (test2json events) as cases and checks,
//	           the comparison, the difference list
//
// The suite is installed by scripts/gateway-conformance-install.sh into
// ~/.cache/cairn-gwconformance/v0.13.1 (never committed). Reports and logs
// are kept in test-output/gateway-conformance (<node>.json, .log,
// .daemon.log). A case is a level-two test of the suite (one request and
// what its answer must be); a check is a test below a case with no subtest
// of its own.
//
//	go run ./scripts/gwconformance [-bin bin/cairn] [-nodes kubo,cairn] [-run TestGatewayCar] [-reuse]
package main
