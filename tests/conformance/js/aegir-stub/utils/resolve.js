// resolve(file, module): the path of a fixture file, looked up from the
// working directory and its node_modules (as aegir/resolve does in node).
import fs from 'node:fs'
import path from 'node:path'

export default function resolve (filePath, module = '') {
  const rel = module ? path.join(module, filePath) : filePath
  const tried = [path.join(process.cwd(), rel)]
  let dir = process.cwd()
  for (;;) {
    tried.push(path.join(dir, 'node_modules', rel))
    const up = path.dirname(dir)
    if (up === dir) break
    dir = up
  }
  const found = tried.find(p => fs.existsSync(p))
  if (!found) throw new Error(`Could not load ${rel}`)
  return found
}
