// cairn's own specs of the kubo-rpc-client API that no published suite
// covers (docs/conformance.md): areas of the kubo-rpc-client run beside
// interface-ipfs-core's, with the same factory.
export { log } from './log.js'
export { diag } from './diag.js'
