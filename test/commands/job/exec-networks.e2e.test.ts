/**
 * `job exec` on a network other than the localnet goes through oclif (src/cli/fast-start.ts serves the localnet only,
 * and hands over a profile for another network once its settings are resolved), whose command resolves the network with connectMarket and reads the job over the RPC node it names: here a
 * JSON-RPC server on 127.0.0.1 that holds no such job.
 */
import {strict as assert} from 'node:assert'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {plainExec} from '../../../src/cli/fast-start.js'
import {runCli} from '../../helpers/cli.js'

describe('gpunet job exec on devnet', () => {
  let server: Server
  let rpcUrl: string
  let dir: string
  const methods: string[] = []
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-exec-devnet-'))
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d.toString()))
      req.on('end', () => {
        const {id, method} = JSON.parse(body) as {id: number; method: string}
        methods.push(method)
        const result = method === 'getProgramAccounts' ? [] : {context: {slot: 1}, value: null}
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({jsonrpc: '2.0', id, result}))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    await new Promise((resolve) => server.close(resolve))
    await rm(dir, {recursive: true, force: true})
  })

  it('reads the job from the network’s RPC node, through oclif: no job there is exit 7', async () => {
    const job = Keypair.generate().publicKey.toBase58()
    const args = ['job', 'exec', job, '--network', 'devnet', '--rpc', rpcUrl, '--', 'true']
    assert.equal(plainExec(args, {}), undefined, 'left to oclif')
    const run = await runCli(args, {env: {XDG_CONFIG_HOME: join(dir, 'config'), GPUNET_LOCALNET_DIR: join(dir, 'ln')}})
    assert.equal(run.code, 7, run.stderr)
    assert.match(run.stderr, new RegExp(`no job at ${job} on this network`))
    assert.ok(methods.includes('getAccountInfo'), methods.join(', '))
  })

  it("a devnet profile's plain form is handed to oclif once its settings are resolved, and uses its RPC node", async () => {
    const config = join(dir, 'profile-config')
    await mkdir(join(config, 'gpunet'), {recursive: true})
    const profiles = {dev: {network: 'devnet', rpcUrl}}
    await writeFile(join(config, 'gpunet', 'config.json'), JSON.stringify({version: 2, profiles}))
    const job = Keypair.generate().publicKey.toBase58()
    const args = ['job', 'exec', job, '--profile', 'dev', '--', 'true']
    assert.ok(plainExec(args, {}), 'parsed by the start-up path')
    methods.length = 0
    const run = await runCli(args, {env: {XDG_CONFIG_HOME: config, GPUNET_LOCALNET_DIR: join(dir, 'ln')}})
    assert.equal(run.code, 7, run.stderr)
    // Announced once: by oclif's command, not also by the start-up path that handed it over.
    assert.equal(run.stderr.match(/Profile dev: devnet/g)?.length, 1, run.stderr)
    assert.ok(methods.includes('getAccountInfo'), methods.join(', '))
  })
})
