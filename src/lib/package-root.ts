import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The fields of gpunet's package.json that the code reads. */
export interface PackageManifest {
  name: string
  version: string
}

let cached: {root: string; manifest: PackageManifest} | undefined

/** The installed gpunet package: its folder and its package.json, found from this module (src/, dist/ or a bundle). */
export function installedPackage(): {root: string; manifest: PackageManifest} {
  if (cached) return cached
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const file = join(dir, 'package.json')
    // Parsed once: `gpunet --version` needs the manifest the search has just read, not a second read of it.
    const manifest = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as PackageManifest) : undefined
    if (manifest?.name === 'gpunet') {
      cached = {root: dir, manifest}
      return cached
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the gpunet package folder')
    dir = parent
  }
}

/** The folder of the installed gpunet package. */
export function packageRoot(): string {
  return installedPackage().root
}
