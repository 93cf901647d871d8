// loadFixture(file, module): the bytes of a fixture file (aegir/fixtures in node).
import fs from 'node:fs'
import resolve from './resolve.js'

export default function loadFixture (filePath, module = '') {
  return fs.readFileSync(resolve(filePath, module))
}
