/* eslint-env mocha */
// cairn's own spec of kubo-rpc-client 7.1.0's diag API (ipfs.diag.cmds,
// sys, net): no published package ships kubo-rpc-client's diag tests (see
// docs/conformance.md). The answers asserted are Kubo 0.42's, checked by
// running this spec against Kubo 0.42 itself (scripts/conformance -kubo).

import { expect } from 'aegir/chai'

export function diag (factory) {
  describe('.diag', function () {
    let ipfs

    before(async function () {
      ipfs = (await factory.spawn()).api
    })

    after(() => factory.clean())

    it('cmds lists requests with Kubo\'s fields, this one active', async () => {
      await ipfs.id()
      const cmds = await ipfs.diag.cmds()
      expect(cmds).to.be.an('array').that.is.not.empty()
      for (const c of cmds) {
        expect(c).to.have.all.keys('ID', 'Command', 'Args', 'Options', 'Active', 'StartTime', 'EndTime')
        expect(c.ID).to.be.a('number')
        expect(c.Command).to.be.a('string')
        expect(c.Active).to.be.a('boolean')
        expect(Number.isNaN(Date.parse(c.StartTime))).to.be.false()
        expect(Number.isNaN(Date.parse(c.EndTime))).to.be.false()
        expect(c.Options).to.be.an('object')
      }
      const self = cmds.filter(c => c.Command === 'diag/cmds' && c.Active)
      expect(self).to.have.lengthOf(1)
      expect(self[0].Options).to.have.property('encoding', 'json')
    })

    it('cmds with verbose answers the same fields', async () => {
      const cmds = await ipfs.diag.cmds({ verbose: true })
      expect(cmds).to.be.an('array').that.is.not.empty()
      const self = cmds.find(c => c.Command === 'diag/cmds' && c.Active)
      expect(self).to.have.all.keys('ID', 'Command', 'Args', 'Options', 'Active', 'StartTime', 'EndTime')
      expect(self.Options).to.have.property('verbose', true)
    })

    it('cmds IDs grow with each request', async () => {
      const a = (await ipfs.diag.cmds()).find(c => c.Command === 'diag/cmds' && c.Active)
      const b = (await ipfs.diag.cmds()).find(c => c.Command === 'diag/cmds' && c.Active)
      expect(b.ID).to.be.above(a.ID)
    })

    it('sys answers Kubo\'s sections', async () => {
      const sys = await ipfs.diag.sys()
      expect(sys).to.have.all.keys('diskinfo', 'environment', 'ipfs_commit', 'ipfs_version', 'memory', 'net', 'runtime')
      expect(sys.diskinfo).to.have.all.keys('fstype', 'total_space', 'free_space')
      expect(sys.diskinfo.total_space).to.be.a('number').that.is.above(0)
      expect(sys.diskinfo.free_space).to.be.a('number')
      // Kubo's two (cairn adds CAIRN_PATH, its repo variable).
      expect(sys.environment).to.include.all.keys('GOPATH', 'IPFS_PATH')
      expect(sys.ipfs_version).to.be.a('string').that.matches(/^\d+\.\d+\.\d+/)
      expect(sys.ipfs_commit).to.be.a('string')
      expect(sys.memory).to.have.all.keys('swap', 'virt')
      expect(sys.memory.swap).to.be.a('number')
      expect(sys.memory.virt).to.be.a('number')
      expect(sys.net).to.have.all.keys('interface_addresses', 'online')
      expect(sys.net.interface_addresses).to.be.an('array').that.includes('/ip4/127.0.0.1')
      expect(sys.net.online).to.be.a('boolean')
      expect(sys.runtime).to.have.all.keys('arch', 'compiler', 'gomaxprocs', 'numcpu', 'numgoroutines', 'os', 'version')
      expect(sys.runtime.os).to.be.a('string')
      expect(sys.runtime.gomaxprocs).to.be.a('number').that.is.above(0)
      expect(sys.runtime.numcpu).to.be.a('number').that.is.above(0)
      expect(sys.runtime.numgoroutines).to.be.a('number').that.is.above(0)
      expect(sys.runtime.version).to.match(/^go/)
    })

    it('net is not a command of Kubo 0.42', async () => {
      await expect(ipfs.diag.net()).to.eventually.be.rejected()
    })
  })
}
