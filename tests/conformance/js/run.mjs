// The kubo-rpc-client conformance run: the published interface-ipfs-core
// suites, with kubo-rpc-client 7.1.0 as the client and cairn spawned by
// ipfsd-ctl 17 as the Kubo node. Run by scripts/conformance (make
// conformance) from the install folder, which holds node_modules; it writes
// one JSON record per test to --out and never judges: the skip list is
// applied by the Go runner.
//
//   node run.mjs --bin <cairn-as-kubo> --out results.json [--cap-ms 20000] [--areas root,pin]
//                [--exclude not-run.json] [--only rerun.json]
//
// --exclude names tests that must not run at all (a JSON array of
// "area test name" strings, a trailing * matching a prefix): those the skip
// list says need DNS or the network. They are reported as skipped. --only
// runs just the tests named in the same form (the runner's second try of
// unexpected failures).
//
// Every node is made by ipfsd-ctl with test: true (profile test: empty
// bootstrap, no mDNS, API, gateway and swarm on 127.0.0.1 random ports); the
// only other servers are the echo server and the mock remote pinning service
// below, both on 127.0.0.1.

import fs from 'node:fs'
import http from 'node:http'
import { parseArgs } from 'node:util'
import Mocha from 'mocha'

const { values: argv } = parseArgs({
  options: {
    bin: { type: 'string' },
    out: { type: 'string' },
    'cap-ms': { type: 'string', default: '20000' },
    areas: { type: 'string', default: '' },
    exclude: { type: 'string', default: '' },
    only: { type: 'string', default: '' }
  }
})
if (!argv.bin || !argv.out) {
  console.error('usage: node run.mjs --bin <cairn-as-kubo> --out results.json [--cap-ms N] [--areas a,b]')
  process.exit(2)
}
const capMs = Number(argv['cap-ms'])
// Read the lists before anything installs its own uncaughtException handler.
const excluded = argv.exclude ? JSON.parse(fs.readFileSync(argv.exclude, 'utf8')) : []
const onlyTitles = argv.only ? JSON.parse(fs.readFileSync(argv.only, 'utf8')) : null

// The suites raise their own timeouts to many minutes; a hang must cost at
// most capMs so that the whole run stays bounded.
for (const proto of [Mocha.Runnable.prototype, Mocha.Suite.prototype]) {
  const orig = proto.timeout
  proto.timeout = function (ms) {
    if (arguments.length === 0) return orig.call(this)
    let n = typeof ms === 'string' ? Number.parseInt(ms, 10) : Number(ms)
    if (!Number.isFinite(n) || n <= 0 || n > capMs) n = capMs
    return orig.call(this, n)
  }
}

// aegir's echo server, which the add-from-URL tests fetch from.
const echo = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1')
  if (u.pathname === '/download') {
    res.end(u.searchParams.get('data') ?? '')
  } else if (u.pathname === '/redirect') {
    res.writeHead(302, { location: u.searchParams.get('to') ?? '/' })
    res.end()
  } else {
    res.writeHead(404)
    res.end()
  }
})
await new Promise(resolve => echo.listen(0, '127.0.0.1', resolve))
process.env.ECHO_SERVER = `http://127.0.0.1:${echo.address().port}`

// The remote pinning service the pin.remote tests talk to (as
// kubo-rpc-client's own test setup does).
const { setup: pinningService } = (await import('mock-ipfs-pinning-service')).default
const pinningToken = 'cairn-conformance'
const pinning = http.createServer(await pinningService({ token: pinningToken, loglevel: 'error' }))
await new Promise(resolve => pinning.listen(0, '127.0.0.1', resolve))
process.env.PINNING_SERVICE_ENDPOINT = `http://127.0.0.1:${pinning.address().port}`
process.env.PINNING_SERVICE_KEY = pinningToken

const { createFactory } = await import('ipfsd-ctl')
const { create } = await import('kubo-rpc-client')
const tests = await import('interface-ipfs-core')
// cairn's own specs of the client API no published suite covers (log,
// diag; docs/conformance.md says why), run with the same factory.
const ownTests = await import('./spec/index.js')

// The daemon flags kubo-rpc-client's own test setup passes to Kubo.
const kuboDaemonArgs = ['--enable-pubsub-experiment', '--enable-namesys-pubsub']
let daemonArgs = kuboDaemonArgs
const notes = []

const allFactories = []
function ctlFactory () {
  const f = createFactory({
    type: 'kubo',
    test: true,
    disposable: true,
    bin: argv.bin,
    rpc: create,
    start: { args: daemonArgs }
  })
  allFactories.push(f)
  return f
}

// kubo-rpc-client 7 moved dht.findPeer, findProvs, get, put and provide
// to routing.* (routing/* on the wire, as Kubo 0.42), and its own fork of
// the dht tests calls them there; interface-ipfs-core's dht area still
// calls the old names, so they are given to the client as those of
// routing.* (dht.query stays dht/query).
function withDhtNames (node) {
  const api = node?.api
  if (api?.dht != null && api.routing != null) {
    for (const name of ['findPeer', 'findProvs', 'get', 'put', 'provide']) {
      if (api.dht[name] == null) api.dht[name] = api.routing[name]
    }
  }
  return node
}

// interface-ipfs-core wants the ipfsd-ctl 12 factory: spawn(options) with
// ipfsOptions.config and args, clean(), opts.type. This adapts it to the
// ipfsd-ctl 17 factory; `proc` and `js` nodes become cairn nodes too.
function suiteFactory () {
  let ctl = ctlFactory()
  return {
    opts: { type: 'go' },
    get controllers () { return ctl.controllers },
    set controllers (v) { ctl.controllers = v },
    async spawn (options = {}) {
      const config = options.ipfsOptions?.config
      const extra = options.args ?? []
      const spec = {
        init: config ? { config } : undefined,
        start: { args: [...daemonArgs, ...extra] }
      }
      try {
        return withDhtNames(await ctl.spawn(spec))
      } catch (err) {
        // cairn refusing one of Kubo's daemon flags (naming a feature it
        // lacks, e.g. --enable-namesys-pubsub while IPNS over pubsub is
        // not built) would stop every suite: drop the flags its error
        // names (all of them if it names none), once, say so, and go on.
        if (daemonArgs.length === 0) throw err
        const text = String(err.message)
        const refused = daemonArgs.filter(a => text.includes(a + ':'))
        const kept = refused.length > 0 ? daemonArgs.filter(a => !refused.includes(a)) : []
        const node = withDhtNames(await ctl.spawn({ ...spec, start: { args: [...kept, ...extra] } }))
        const lines = text.split('\n').map(l => l.trim()).filter(Boolean)
        const why = lines.find(l => /flag|option|not (supported|implemented)/i.test(l)) ?? lines[0] ?? ''
        const dropped = refused.length > 0 ? refused : daemonArgs
        notes.push(`cairn daemon refused ${dropped.join(' ')} (${why.slice(0, 200)}); the nodes run without ${dropped.length > 1 ? 'them' : 'it'}`)
        daemonArgs = kept
        return node
      }
    },
    async clean () {
      const old = ctl
      ctl = ctlFactory()
      await old.clean()
    }
  }
}

const areas = [
  'root', 'files', 'bitswap', 'block', 'dag', 'object', 'pin', 'bootstrap', 'dht', 'name',
  'namePubsub', 'ping', 'pubsub', 'swarm', 'config', 'key', 'miscellaneous', 'repo', 'stats',
  ...Object.keys(ownTests)
]
const wanted = argv.areas ? argv.areas.split(',') : areas

const mocha = new Mocha({ timeout: capMs, reporter: 'spec', color: false })
if (onlyTitles) {
  const titles = onlyTitles
  const esc = t => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  mocha.grep(new RegExp(`^(${titles.map(esc).join('|')})$`))
}
mocha.suite.emit('pre-require', globalThis, 'interface-ipfs-core', mocha)

// The suites call the global it() when they declare a test: mark the
// excluded ones pending before they can run.
const isExcluded = title => excluded.some(p => p.endsWith('*') ? title.startsWith(p.slice(0, -1)) : title === p)
const mochaIt = globalThis.it
globalThis.it = Object.assign(function (...args) {
  const test = mochaIt.apply(this, args)
  if (test && isExcluded(test.fullTitle())) test.pending = true
  return test
}, mochaIt)
for (const area of wanted) {
  const suite = tests[area] ?? ownTests[area]
  if (typeof suite !== 'function') {
    console.error(`unknown area ${area}`)
    process.exit(2)
  }
  globalThis.describe(area, function () {
    suite(suiteFactory())
  })
}

const records = []
const started = Date.now()
const runner = mocha.run(() => {})
runner.on('pass', t => records.push(record(t, 'pass')))
runner.on('pending', t => records.push(record(t, 'skip')))
runner.on('fail', (t, err) => {
  if (t.type === 'hook') {
    // The tests a failed hook stops are failures too, with the hook's error.
    const skipped = []
    collectUnrun(t.parent, skipped)
    for (const u of skipped) records.push(record(u, 'fail', err, `${t.title}: `))
    if (skipped.length === 0 && !/after/.test(t.title)) records.push(record(t, 'fail', err))
  } else {
    records.push(record(t, 'fail', err))
  }
})
runner.on('end', async () => {
  fs.writeFileSync(argv.out, JSON.stringify({ notes, seconds: Math.round((Date.now() - started) / 1000), tests: dedupe(records) }, null, 1))
  echo.close()
  pinning.close()
  // The suites clean their nodes in after hooks; stop any a failed hook left
  // (the runner also kills this process group when node ends).
  await Promise.race([
    Promise.all(allFactories.map(f => f.clean().catch(() => {}))),
    new Promise(resolve => setTimeout(resolve, 30000))
  ])
  process.exit(0)
})

const seen = new Set()
function collectUnrun (suite, out) {
  for (const t of suite.tests) {
    if (t.state === undefined && !t.pending && !seen.has(t)) {
      seen.add(t)
      out.push(t)
    }
  }
  for (const s of suite.suites) collectUnrun(s, out)
}

function record (t, state, err, prefix = '') {
  const title = t.fullTitle()
  const area = title.split(' ')[0]
  const rec = { area, name: title.slice(area.length + 1), state }
  if (err) rec.error = prefix + String(err.message ?? err).split('\n').slice(0, 6).join('\n').slice(0, 600)
  return rec
}

function dedupe (recs) {
  const byName = new Map()
  for (const r of recs) {
    const key = `${r.area} ${r.name}`
    const prev = byName.get(key)
    if (!prev || (prev.state === 'pass' && r.state === 'fail')) byName.set(key, r)
  }
  return [...byName.values()]
}
