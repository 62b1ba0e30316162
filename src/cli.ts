import './console-filter.js'

import {serveWithoutOclif} from './fast-start.js'

const argv = process.argv.slice(2)
if (!(await serveWithoutOclif(argv))) {
  // oclif checks the Node version against its own package's engines when it loads, which costs a sixth of a
  // command's start (loading semver) and cannot work from a bundle (it looks for its package.json beside itself).
  // npm checks gpunet's engines at install time.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  await (await import('./oclif-main.js')).runOclif(import.meta.url)
}
