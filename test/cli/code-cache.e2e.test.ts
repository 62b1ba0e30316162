import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import module from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {cacheLocation, commandKey} from '../../src/cli/code-cache.js'
import {registerBundledModules} from '../../src/cli/bundled-modules.js'
import {BIN} from '../helpers/cli.js'
import {moduleLoadLog} from '../helpers/module-log.js'

// Node 20 runs the CLI from its CommonJS bundle with a code cache; Node 22+ has its own compile cache.
const NODE_20 = !(module as {enableCompileCache?: unknown}).enableCompileCache

describe('the code cache of Node 20 (src/cli/code-cache.ts)', () => {
  let base: string
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'gpunet-code-cache-test-'))
  })
  afterEach(() => rmSync(base, {recursive: true, force: true}))

  it('names a cache by the command words, help and dry run, never by files or values', () => {
    assert.equal(commandKey(['job', 'post', '--file', 'job.json']), 'job-post')
    assert.equal(commandKey(['job', 'post', 'job.json', '--json']), 'job-post')
    assert.equal(commandKey(['job:post', 'x']), 'job-post')
    assert.equal(commandKey(['job', 'post', '--help']), 'job-post-help')
    assert.equal(commandKey(['job', 'post', '-h']), 'job-post-help')
    assert.equal(commandKey(['job', 'post', '--file', 'a.json', '--dry-run']), 'job-post-dry-run')
    assert.equal(commandKey(['job', 'get', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin']), 'job-get')
    assert.equal(commandKey(['secrets', 'set', 'name']), 'secrets-set')
    assert.equal(commandKey(['--version']), 'gpunet')
    assert.equal(commandKey([]), 'gpunet')
    assert.equal(commandKey(['Job', 'post']), 'gpunet')
    assert.equal(commandKey(['../../etc/passwd']), 'gpunet')
    assert.equal(commandKey(['help']), 'help')
  })

  it('keeps caches in a folder of its own that only this user can write, per Node and build', () => {
    const location = cacheLocation('gpunet-abc', ['job', 'post'], base)!
    const uid = process.getuid!()
    assert.equal(location.dir, join(base, `gpunet-code-cache-${uid}`))
    assert.equal(location.prefix, `${process.version}-${process.arch}-gpunet-abc-`)
    assert.equal(location.file, join(location.dir, `${location.prefix}job-post.bin`))
    assert.equal(readdirSync(base).length, 1)
    // Made 0700 whatever the umask; found again as it is.
    assert.deepEqual(cacheLocation('gpunet-abc', ['job', 'post'], base), location)
  })

  it('uses no cache when its folder is open to others, a link, or not a folder', () => {
    const dir = join(base, `gpunet-code-cache-${process.getuid!()}`)
    mkdirSync(dir, {mode: 0o700})
    chmodSync(dir, 0o770)
    assert.equal(cacheLocation('b', ['job'], base), undefined)
    chmodSync(dir, 0o707)
    assert.equal(cacheLocation('b', ['job'], base), undefined)
    chmodSync(dir, 0o700)
    assert.ok(cacheLocation('b', ['job'], base))
    rmSync(dir, {recursive: true})
    const elsewhere = join(base, 'elsewhere')
    mkdirSync(elsewhere, {mode: 0o700})
    symlinkSync(elsewhere, dir)
    assert.equal(cacheLocation('b', ['job'], base), undefined)
    rmSync(dir)
    writeFileSync(dir, '')
    assert.equal(cacheLocation('b', ['job'], base), undefined)
    assert.equal(cacheLocation('b', ['job'], join(base, 'missing', 'deeper')), undefined)
  })

  it('hands oclif the bundled modules by their path under dist/, and nothing else', async () => {
    const key = Symbol.for('gpunet.bundledModule')
    const before = (globalThis as Record<symbol, unknown>)[key]
    try {
      const post = {default: 'post'}
      registerBundledModules(join(base, 'dist'), {'commands/job/post.js': () => Promise.resolve(post)})
      const lookup = (globalThis as Record<symbol, unknown>)[key] as (path: string) => Promise<unknown> | undefined
      assert.equal(await lookup(join(base, 'dist', 'commands', 'job', 'post.js')), post)
      assert.equal(lookup(join(base, 'dist', 'commands', 'job', 'get.js')), undefined)
      assert.equal(lookup(join(base, 'commands', 'job', 'post.js')), undefined)
    } finally {
      ;(globalThis as Record<symbol, unknown>)[key] = before
    }
  })

  describe('the CLI on Node 20', function () {
    before(function () {
      if (!NODE_20) this.skip()
    })

    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      spawnSync(process.execPath, [BIN, ...args], {encoding: 'utf8', env: {...process.env, TMPDIR: base, ...env}})
    const caches = () => readdirSync(join(base, `gpunet-code-cache-${process.getuid!()}`)).sort()

    it('writes a cache at the end of a successful run, uses it next time, and answers the same', () => {
      const first = cli(['market', '--help'])
      assert.equal(first.status, 0, first.stderr)
      const [name] = caches()
      assert.match(name!, new RegExp(`^${process.version}-${process.arch}-gpunet-[0-9a-f]{16}-market-help\\.bin$`))
      const file = join(base, `gpunet-code-cache-${process.getuid!()}`, name!)
      const made = readFileSync(file)
      assert.ok(made.length > 10_000, `a cache of ${made.length} bytes`)
      const second = cli(['market', '--help'])
      assert.equal(second.stdout, first.stdout)
      assert.equal(second.status, 0)
      // Used, not made again.
      assert.deepEqual(readFileSync(file), made)
    })

    it('makes no cache after a failed run, nor with NODE_DISABLE_COMPILE_CACHE', () => {
      const failed = cli(['job', 'get', 'not-an-address'])
      assert.notEqual(failed.status, 0)
      const off = cli(['market', '--help'], {NODE_DISABLE_COMPILE_CACHE: '1'})
      assert.equal(off.status, 0, off.stderr)
      assert.deepEqual(caches(), [])
    })

    it('replaces a cache V8 refuses (another build’s, or damaged) and the caches of other builds', () => {
      assert.equal(cli(['market', '--help']).status, 0)
      const dir = join(base, `gpunet-code-cache-${process.getuid!()}`)
      const [name] = caches()
      const file = join(dir, name!)
      const good = readFileSync(file)
      writeFileSync(file, Buffer.alloc(good.length, 7))
      writeFileSync(join(dir, 'v18.0.0-x64-gpunet-0000000000000000-job-post.bin'), 'old')
      // The plain `job exec` bundle's cache (src/cli/fast-start.ts) is another bundle's: it stays.
      const exec = `${process.version}-${process.arch}-exec-0000000000000000-job-exec.bin`
      writeFileSync(join(dir, exec), 'other bundle')
      const run = cli(['market', '--help'])
      assert.equal(run.status, 0, run.stderr)
      assert.match(run.stdout, /USAGE/)
      assert.deepEqual(caches(), [exec, name].sort())
      assert.ok(readFileSync(file).length > 10_000)
      assert.notDeepEqual(readFileSync(file), Buffer.alloc(good.length, 7))
    })

    it('runs the commands from the bundle, with oclif’s module loader taking them from it', () => {
      // A module hook in the CLI's process records what Node's ES module loader loads: no command file.
      const modules = moduleLoadLog(base)
      const run = spawnSync(process.execPath, [...modules.importArgs, BIN, 'config', 'list', '--json'], {
        encoding: 'utf8',
        env: {...process.env, TMPDIR: base, XDG_CONFIG_HOME: join(base, 'config')},
      })
      assert.equal(run.status, 0, run.stderr)
      assert.ok(JSON.parse(run.stdout), 'the command ran')
      const loaded = modules.loaded().filter((url) => url.includes('/dist/'))
      assert.ok(loaded.some((url) => url.endsWith('/dist/cli/main.js')))
      assert.deepEqual(
        loaded.filter((url) => /\/dist\/(commands|hooks)\/|\/dist\/help\.js$/.test(url)),
        [],
      )
    })
  })
})
