// Package status is the built-in module http_status: a server-rendered
// page at /status with the node's identity, peers, repo use against
// StorageMax, pins, flash wear (bytes written since start and over the
// store's life) and memory against the budget (node.Vitals, the metrics'
// source), a bandwidth chart of the last hour (inline SVG) and an
// upload form that adds a file and shows its CID. No JavaScript.
//
// The upload streams the multipart body into the node's adder (the app
// has streaming uploads), so a file is never held in memory whole; it is
// capped by Modules.HTTP.MaxUploadSize. Cross-site posts (an Origin or
// Sec-Fetch-Site naming another site) are refused with 403.
//
// # Files
//
//   - status.go: the http_status module: routes and the upload.
//   - page.go: the HTML of the status page and its SVG chart.
package status
