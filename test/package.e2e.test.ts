import {strict as assert} from 'node:assert'
import {execFile} from 'node:child_process'
import {mkdir, mkdtemp, rm, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {Keypair} from '@solana/web3.js'

import {seedNetwork} from './helpers/standin-network.js'
import {startStandinPinning, startStandinRpc} from './helpers/standin.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** A project next to this one with gpunet installed (a link to this checkout), running `main.mjs`. */
async function consumer(main: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), 'gpunet-consumer-'))
  try {
    await mkdir(join(project, 'node_modules'))
    await symlink(ROOT, join(project, 'node_modules', 'gpunet'), 'dir')
    await writeFile(join(project, 'main.mjs'), main)
    const {stdout} = await promisify(execFile)(process.execPath, ['main.mjs'], {
      cwd: project,
      env: {...process.env, XDG_CONFIG_HOME: join(project, 'config'), ...env},
    })
    return stdout
  } finally {
    await rm(project, {recursive: true, force: true})
  }
}

describe('the gpunet package', () => {
  it("exports the library: import {validateJobDefinition} from 'gpunet' works from another project", async () => {
    const stdout = await consumer(
      `import {validateJobDefinition, jobDefinitionJsonSchema} from 'gpunet'
const good = validateJobDefinition({version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'x'}}]})
const bad = validateJobDefinition({version: '0.1', type: 'container', ops: []})
console.log(JSON.stringify({good: good.success, bad: bad.success, code: bad.errors[0].code, schema: jobDefinitionJsonSchema().$schema}))
`,
    )
    assert.deepEqual(JSON.parse(stdout), {
      good: true,
      bad: false,
      code: 'too_few_items',
      schema: 'https://json-schema.org/draft/2020-12/schema',
    })
  })

  it('posts, follows, extends and stops a job from code: connectNetwork, postJob, waitForJob, getJob, extendJob, stopJob', async function () {
    this.timeout(60_000)
    const rpc = await startStandinRpc()
    const pinning = await startStandinPinning('jwt')
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-wallet-'))
    try {
      const wallet = Keypair.generate()
      const node = Keypair.generate().publicKey
      await writeFile(join(dir, 'wallet.json'), JSON.stringify([...wallet.secretKey]))
      seedNetwork(rpc, 'devnet', wallet.publicKey, node)
      const stdout = await consumer(
        `import {connectNetwork, postJob, getJob, waitForJob, extendJob, stopJob} from 'gpunet'
const net = await connectNetwork({network: 'devnet', rpcUrl: process.env.RPC, wallet: process.env.WALLET})
const definition = {version: '0.1', type: 'container', ops: [{id: 'hi', type: 'container/run', args: {image: 'alpine', cmd: ['echo', 'hi']}}]}
const posted = await postJob(net, definition, {timeout: 600})
const seen = []
const running = await waitForJob(net, posted.job, {until: 'running', timeoutSeconds: 10, onProgress: (line) => seen.push(line)})
const got = await getJob(net, posted.job)
const extended = await extendJob(net, posted.job, 900)
const stopped = await stopJob(net, posted.job)
let invalid
try { await postJob(net, {version: '0.1', type: 'container', ops: []}) } catch (e) { invalid = {code: e.code, exitCode: e.exitCode} }
await net.close()
console.log(JSON.stringify({posted, running: running.status, node: got.node, seen, extended, stopped, invalid, wallet: await net.walletAddress()}))
`,
        {
          RPC: rpc.url,
          WALLET: join(dir, 'wallet.json'),
          GPUNET_PINATA_JWT: 'jwt',
          GPUNET_PINNING_SERVICE_URL: pinning.url,
          GPUNET_IPFS_GATEWAY: pinning.url,
        },
      )
      const out = JSON.parse(stdout) as {
        wallet: string
        posted: {network: string; job: string; timeout: number; totalPrice: {baseUnits: string}; definition: string}
        running: string
        seen: string[]
        node: string
        extended: {previousTimeout: number; timeout: number; charged: {baseUnits: string}}
        stopped: {action: string}
        invalid: {code: string; exitCode: number}
      }
      assert.equal(out.wallet, wallet.publicKey.toBase58())
      assert.equal(out.posted.network, 'devnet')
      assert.equal(out.posted.timeout, 600)
      assert.equal(out.posted.totalPrice.baseUnits, '6000')
      assert.equal(out.posted.definition, [...pinning.content.keys()][0])
      assert.equal(out.running, 'RUNNING')
      assert.deepEqual(out.seen, [`Job ${out.posted.job} is RUNNING`])
      assert.equal(out.node, node.toBase58())
      assert.deepEqual(
        [out.extended.previousTimeout, out.extended.timeout, out.extended.charged.baseUnits],
        [600, 900, '3000'],
      )
      assert.equal(out.stopped.action, 'end')
      assert.deepEqual(out.invalid, {code: 'invalid_definition', exitCode: 3})
      // list, extend, end: each sent once.
      assert.equal(rpc.sent.length, 3)
    } finally {
      await rpc.close()
      await pinning.close()
      await rm(dir, {recursive: true, force: true})
    }
  })
})
