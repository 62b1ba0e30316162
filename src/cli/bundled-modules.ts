// The modules oclif loads by path (commands, the help class, hooks) as the Node 20 bundle carries them. oclif's
// module loader (edited at build time, scripts/oclif-startup.js) asks this table before it imports a file: the
// bundle's copies share its one oclif, and its code cache holds their compiled code (src/cli/code-cache.ts).
import {relative, sep} from 'node:path'

/** A module of the bundle, loaded on first use. */
export type BundledModule = () => Promise<unknown>

const KEY = Symbol.for('gpunet.bundledModule')

/**
 * Makes oclif take the modules of `modules` (keyed by their path under `distDir`, with `/`, e.g.
 * `commands/job/post.js`) from the bundle; any other path it imports as usual.
 */
export function registerBundledModules(distDir: string, modules: Record<string, BundledModule>): void {
  const table = new Map(Object.entries(modules))
  ;(globalThis as Record<symbol, unknown>)[KEY] = (filePath: string): Promise<unknown> | undefined =>
    table.get(relative(distDir, filePath).split(sep).join('/'))?.()
}
