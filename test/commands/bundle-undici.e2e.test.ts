import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

// @ts-expect-error -- a build script in plain JavaScript, without declarations
import {privateDispatcherSource} from '../../scripts/undici-bundle.js'
import {BIN} from '../helpers/cli.js'
import {startStandinRpc} from '../helpers/standin.js'

const UNDICI_GLOBAL = createRequire(import.meta.url).resolve('undici/lib/global.js')

describe('the CLI bundle’s undici', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-bundle-undici-'))
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('sends a request without installing a process-wide dispatcher or loading Node’s own undici', async () => {
    // Written by the CLI's own process as it exits: whether Node's own undici was loaded, and where the process-wide
    // dispatcher was defined from.
    const report = join(dir, 'report.json')
    const preload = join(dir, 'report.mjs')
    await writeFile(
      preload,
      [
        `import {writeFileSync} from 'node:fs'`,
        `const key = Symbol.for('undici.globalDispatcher.1')`,
        `const define = Object.defineProperty`,
        `const definers = []`,
        `Object.defineProperty = function (target, name, descriptor) {`,
        `  if (target === globalThis && name === key) definers.push(new Error().stack.split('\\n').slice(2, 5).join(' '))`,
        `  return define.call(this, target, name, descriptor)`,
        `}`,
        `process.on('exit', () => writeFileSync(${JSON.stringify(report)}, JSON.stringify({`,
        `  builtinUndici: process.moduleLoadList.some((m) => m.includes('deps/undici')), definers})))`,
        '',
      ].join('\n'),
    )
    const rpc = await startStandinRpc()
    try {
      const child = spawn(
        process.execPath,
        ['--import', pathToFileURL(preload).href, BIN, 'job', 'get', '11111111111111111111111111111111'],
        {
          env: {
            ...process.env,
            NO_COLOR: '1',
            XDG_CONFIG_HOME: join(dir, 'config'),
            GPUNET_NETWORK: 'devnet',
            GPUNET_RPC_URL: rpc.url,
          },
          stdio: 'ignore',
        },
      )
      const [code] = (await once(child, 'exit')) as [number]
      assert.notEqual(code, 0, 'no such job')
      assert.ok(
        rpc.requests.some((r) => r.method === 'getMultipleAccounts'),
        `the RPC was asked: ${rpc.requests.map((r) => r.method).join(', ')}`,
      )
      const seen = JSON.parse(await readFile(report, 'utf8')) as {builtinUndici: boolean; definers: string[]}
      // Node's own undici may define it (on Node 24, node:http loads it); the bundle's never does.
      const own = seen.definers.filter((stack) => !stack.includes('node:internal/deps/undici/'))
      assert.deepEqual(own, [], 'the bundle defined the process-wide dispatcher')
      // The start-up saving is Node 20's: Node 24's node:http loads its own undici whatever the bundle does.
      if (process.versions.node.startsWith('20.')) assert.equal(seen.builtinUndici, false)
    } finally {
      await rpc.close()
    }
  })

  it('keeps undici’s dispatcher in a private object, and stops the build when undici’s text has changed', async () => {
    const text = await readFile(UNDICI_GLOBAL, 'utf8')
    const edited = privateDispatcherSource(text) as string
    assert.doesNotMatch(edited, /\bglobalThis\b/)
    // The module still works: it makes and keeps its own Agent, which never reaches globalThis.
    const module = {exports: {} as {getGlobalDispatcher(): unknown}}
    const before = Object.getOwnPropertySymbols(globalThis).length
    new Function('module', 'exports', 'require', edited)(module, module.exports, createRequire(UNDICI_GLOBAL))
    assert.equal(typeof (module.exports.getGlobalDispatcher() as {dispatch?: unknown}).dispatch, 'function')
    assert.equal(Object.getOwnPropertySymbols(globalThis).length, before)
    assert.throws(
      () => privateDispatcherSource(text.replace('return globalThis[legacyGlobalDispatcher]', 'return undefined')),
      /undici\/lib\/global\.js names globalThis 2 times/,
    )
  })
})
