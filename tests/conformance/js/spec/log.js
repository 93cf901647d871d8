/* eslint-env mocha */
// cairn's own spec of kubo-rpc-client 7.1.0's log API (ipfs.log.ls, level,
// tail): no published package ships kubo-rpc-client's log tests (see
// docs/conformance.md). The answers asserted are Kubo 0.42's, checked by
// running this spec against Kubo 0.42 itself (scripts/conformance -kubo).

import { expect } from 'aegir/chai'

export function log (factory) {
  describe('.log', function () {
    let ipfs

    before(async function () {
      ipfs = (await factory.spawn()).api
    })

    after(() => factory.clean())

    it('ls lists the subsystems by name', async () => {
      const subsystems = await ipfs.log.ls()
      expect(subsystems).to.be.an('array').that.is.not.empty()
      for (const s of subsystems) expect(s).to.be.a('string').that.is.not.empty()
      // Kubo's own subsystems.
      expect(subsystems).to.include.members(['core', 'cmd/ipfs', 'core/commands'])
    })

    it('level sets one subsystem and says so', async () => {
      const res = await ipfs.log.level('core', 'debug')
      expect(res).to.deep.equal({ message: "Changed log level of 'core' to 'debug'\n" })
    })

    it('level sets every subsystem with all, as *', async () => {
      const res = await ipfs.log.level('all', 'error')
      expect(res).to.deep.equal({ message: "Changed log level of '*' to 'error'\n" })
    })

    it('level default sets the default level', async () => {
      const res = await ipfs.log.level('core', 'default')
      expect(res).to.deep.equal({ message: "Changed log level of 'core' to 'error'\n" })
    })

    it('level accepts a subsystem that has not logged yet (go-log keeps it for later)', async () => {
      const res = await ipfs.log.level('no-such-subsystem-xyz', 'info')
      expect(res).to.deep.equal({ message: "Changed log level of 'no-such-subsystem-xyz' to 'info'\n" })
    })

    it('level refuses an unknown level', async () => {
      await expect(ipfs.log.level('core', 'loud')).to.eventually.be.rejectedWith(/unrecognized level: "loud"/)
    })

    it('tail streams log events as JSON objects', async () => {
      await ipfs.log.level('core/commands', 'info')
      const controller = new AbortController()
      const events = ipfs.log.tail({ signal: controller.signal })[Symbol.asyncIterator]()
      const first = events.next() // the request is sent on the first next()
      // log level logs its change at info under core/commands: the event
      // to wait for. Sent again until it shows (the tail may attach late).
      const timer = setInterval(() => { ipfs.log.level('core/commands', 'info').catch(() => {}) }, 200)
      try {
        let ev = (await first).value
        while (!(ev?.logger === 'core/commands' && /Changed log level/.test(ev?.msg))) {
          const { value, done } = await events.next()
          if (done) throw new Error('log tail ended')
          ev = value
        }
        expect(ev).to.include({ level: 'info', logger: 'core/commands', msg: "Changed log level of 'core/commands' to 'info'\n" })
        expect(ev.ts).to.be.a('string')
        expect(Number.isNaN(Date.parse(ev.ts))).to.be.false()
        expect(ev.caller).to.be.a('string')
      } finally {
        clearInterval(timer)
        controller.abort()
        await events.return?.().catch(() => {})
        await ipfs.log.level('all', 'error')
      }
    })

    it('tail --log-level refuses an unknown level', async () => {
      const events = ipfs.log.tail({ searchParams: { 'log-level': 'loud' } })
      await expect((async () => { for await (const e of events) return e })()).to.eventually.be.rejectedWith(/setting log level loud/)
    })
  })
}
