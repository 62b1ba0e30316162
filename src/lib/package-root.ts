import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

let cached: string | undefined

/** The folder of the installed gpunet package, found from this module whether it runs from src/, dist/ or a bundle. */
export function packageRoot(): string {
  if (cached) return cached
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as {name?: string}).name === 'gpunet') {
      cached = dir
      return dir
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the gpunet package folder')
    dir = parent
  }
}
