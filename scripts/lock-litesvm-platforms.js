// Adds litesvm's platform packages to package-lock.json when npm left them out. The registry has no 1.5.0 build
// for most platforms, so `npm install` drops those optional packages from the lock, and `npm ci` then refuses the
// lock as out of sync. Run after any `npm install` that rewrites the lock: `node scripts/lock-litesvm-platforms.js`.
import {readFileSync, writeFileSync} from 'node:fs'
import process from 'node:process'
import {fileURLToPath, URL} from 'node:url'

const lockFile = fileURLToPath(new URL('../package-lock.json', import.meta.url))
const lock = JSON.parse(readFileSync(lockFile, 'utf8'))
const litesvm = lock.packages['node_modules/litesvm']
const platform = (name) => {
  const [, os, cpu, libc] = /^litesvm-(darwin|linux|win32)-(x64|arm64)(?:-(gnu|musl))?/.exec(name) ?? []
  if (!os) throw new Error(`unknown litesvm platform package ${name}`)
  return {os: [os], cpu: [cpu], ...(libc ? {libc: [libc === 'gnu' ? 'glibc' : 'musl']} : {})}
}

let added = 0
for (const [name, version] of Object.entries(litesvm?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`
  if (lock.packages[key]) continue
  const {os, cpu, libc} = platform(name)
  lock.packages[key] = {
    version,
    cpu,
    ...(libc ? {libc} : {}),
    license: 'MIT',
    optional: true,
    os,
    engines: {node: '>= 20'},
  }
  added++
}
if (added > 0) writeFileSync(lockFile, `${JSON.stringify(lock, null, 2)}\n`)
process.stdout.write(`litesvm platform packages added to the lock: ${added}\n`)
