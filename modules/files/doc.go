// Package files serves static files to http apps (as Prosody's
// net.http.files does) and provides the built-in modules
// http_files (a folder or /ipfs/ path at /files), http_ipfs (the node's
// HTTP gateway at /ipfs/<cid>/..., answered by the gateway package's
// handler that the host is given) and http_dir_listing (directory pages).
//
// Start from [Serve]. A path option that starts with /ipfs is served from
// the node's own storage through modapi.NodeView; anything else is a
// folder (or one file) on disk.
//
// # Safety
//
// The wildcard argument is decoded a second time and split on "/": a
// segment that decodes to something containing "/" or NUL is refused
// (400), ".." pops a segment and popping above the root is refused (400).
// Symlinks placed inside the folder by its owner are followed, as in
// Prosody; requests cannot create them.
//
// # Files
//
//   - serve.go: serving one request (Serve, Sanitize).
//   - fs.go: the two places files come from: a folder on disk and the node's
//     storage (/ipfs/ paths).
//   - mime.go: the Content-Type of a file.
//   - module.go: the built-in modules http_files and http_ipfs.
//   - listing.go: the http_dir_listing module.
//   - ctime_linux.go, ctime_other.go: a file's inode change time for its ETag
//     (Linux; elsewhere the ETag comes from size and mtime alone).
package files
