// Node 20 has no compile cache (`module.enableCompileCache` is Node 22.1+), and V8 compiling oclif's and a command's
// code is most of what `gpunet job post` costs there (docs/development.md). So on Node 20 the CLI runs one CommonJS
// bundle of oclif and every command (dist/node20/, built by scripts/build.js) through `vm.Script` with the code
// cache of an earlier run of the same command: V8 then deserializes compiled functions instead of parsing and
// compiling them. A cache is made at the exit of a successful run that had none (or whose cache V8 refused), after
// the command ran, so it holds the functions the command called, not only the top-level code.
import {lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {setFlagsFromString} from 'node:v8'
import {join} from 'node:path'
import {Script} from 'node:vm'

/** What the bundle exports: the CLI, started. */
interface BundledCli {
  run(): Promise<void>
}

/** A cache file of one command and one build of the bundle, and the folder that holds it. */
export interface CacheLocation {
  dir: string
  file: string
  /** The start of every cache file name of this Node and this build; others are removed when one is written. */
  prefix: string
  /** The names of every cache of this kind of bundle (`gpunet-<hash>`, `exec-<hash>`), whatever the Node or build. */
  sameKind: RegExp
}

/** Runs the Node 20 bundle of oclif and the commands under `root`/dist/node20 for `argv`. */
export async function runBundledCli(root: string, argv: readonly string[], env = process.env): Promise<void> {
  await loadBundle<BundledCli>(root, 'gpunet', argv, env).run()
}

/**
 * Loads the Node 20 bundle `kind` under `root`/dist/node20 (`gpunet`: oclif and the commands; `exec`: the plain
 * `job exec` of src/cli/fast-start.ts) with V8's code cache of the command `argv` names, when one can be kept safely,
 * and returns what it exports.
 */
export function loadBundle<T>(root: string, kind: string, argv: readonly string[], env = process.env): T {
  const dir = join(root, 'dist', 'node20')
  // The build names a bundle by its kind and content hash, so a cache never meets another build's code.
  const name = readdirSync(dir).find((file) => file.startsWith(`${kind}-`) && file.endsWith('.cjs'))
  if (!name) throw new Error(`no ${kind} bundle in ${dir}: run npm run build`)
  const filename = join(dir, name)
  const source = readFileSync(filename, 'latin1')
  const require = createRequire(filename)
  startLiftoffOnly(source, require)
  const location = env.NODE_DISABLE_COMPILE_CACHE ? undefined : cacheLocation(name.slice(0, -4), argv)
  const cachedData = location && readCache(location.file)
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    cachedData,
  })
  if (location && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once('exit', (code) => {
      if (code === 0) writeCache(location, script.createCachedData())
    })
  }
  const module = {exports: {} as T}
  const factory = script.runInThisContext() as (...args: unknown[]) => void
  factory.call(module.exports, module.exports, require, module, filename, dir)
  return module.exports
}

/**
 * Loads the built-in modules the bundle names in its first line, then sets V8's `--liftoff-only`. V8 compiles
 * undici's HTTP parser (WebAssembly) at once with its baseline compiler, then again in the background with its
 * optimizing one, which a short command never profits from and waits for at exit (10 to 15% of `job post`'s
 * instructions). But a flag changed at run time also makes V8 refuse Node's own code cache of every built-in module
 * loaded after it, which then compiles from source (120 M instructions of `job post`): so they are loaded first.
 */
function startLiftoffOnly(source: string, require: NodeJS.Require): void {
  const names = /^\/\* builtins: ([\w/ ]*) \*\//.exec(source)?.[1]?.split(' ') ?? []
  for (const name of names) if (name) require(`node:${name}`)
  setFlagsFromString('--liftoff-only')
}

/**
 * Where the cache of the command `argv` names is kept: a folder of the OS temp folder that only this user can
 * write, as Node 22's compile cache. A cache is code the process runs, so none is used when that folder is another
 * user's, a link, or open to others. Undefined means "run without a cache".
 */
export function cacheLocation(build: string, argv: readonly string[], base = tmpdir()): CacheLocation | undefined {
  const uid = process.getuid?.()
  const dir = join(base, `gpunet-code-cache${uid === undefined ? '' : `-${uid}`}`)
  try {
    mkdirSync(dir, {mode: 0o700})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined
  }
  try {
    const stat = lstatSync(dir)
    if (!stat.isDirectory() || (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o077) !== 0))) return undefined
  } catch {
    return undefined
  }
  const prefix = `${process.version}-${process.arch}-${build}-`
  const kind = build.replace(/-[0-9a-f]+$/, '')
  const sameKind = new RegExp(`^v[^-]+-[^-]+-${kind}-[0-9a-f]+-`)
  return {dir, file: join(dir, `${prefix}${commandKey(argv)}.bin`), prefix, sameKind}
}

/**
 * The name of the cache of the command `argv` runs: its words (at most two: `job post`; a file or a flag ends
 * them), and whether it only asks for help or a dry run. Each keeps its own cache, since a cache holds the
 * functions its first run compiled: a `job post --help` must not leave `job post` a cache without the post.
 */
export function commandKey(argv: readonly string[]): string {
  const words: string[] = []
  for (const arg of argv) {
    if (words.length >= 2 || !/^[a-z][a-z\d:-]*$/.test(arg)) break
    words.push(...arg.split(':').filter(Boolean))
  }
  const modes = [
    argv.includes('--help') || argv.includes('-h') ? 'help' : '',
    argv.includes('--dry-run') ? 'dry-run' : '',
  ]
  return [...words.slice(0, 2), ...modes].filter(Boolean).join('-') || 'gpunet'
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/**
 * Writes a cache by renaming a whole file into place, and removes the caches of other builds and Nodes of the same
 * bundle (the other bundle's stay).
 */
function writeCache(location: CacheLocation, data: Buffer): void {
  try {
    const temporary = `${location.file}.${process.pid}.tmp`
    writeFileSync(temporary, data, {mode: 0o600})
    renameSync(temporary, location.file)
    for (const file of readdirSync(location.dir)) {
      const stale = !file.startsWith(location.prefix) && location.sameKind.test(file) && !file.endsWith('.tmp')
      if (stale) unlinkSync(join(location.dir, file))
    }
  } catch {
    // A cache that cannot be written only means the next run compiles again.
  }
}
