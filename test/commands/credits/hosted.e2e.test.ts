/**
 * The hosted-manager client through the built CLI, against a real HTTP server on 127.0.0.1 standing in for the
 * network's public API (`--network devnet --manager <it>`): the preset URL of each network, the API key sent as a
 * Bearer header (never echoed: redacted from what the server sends back), the wallet's NosanaApiAuthentication
 * headers without a key, and the faults: 401 (exit 6 with a hint), 429 waited out by its Retry-After then exit 5,
 * 5xx (exit 5 with the status), bodies cut and stripped of control sequences before they are printed.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'

import {RATE_LIMIT_RETRIES} from '../../../src/lib/http/api-client.js'
import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {runCli} from '../../helpers/cli.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {removeDir, tempDir} from '../../helpers/files.js'

const KEY = 'nos_hosted_test_key_0123456789abcdef'
const JOB = 'FP7qqSCQAshASCDACoic6EjNwsQMCA21jfTW3DFFdjFp'
const BALANCE = {assignedCredits: 12.5, reservedCredits: 0.25, settledCredits: 2}

interface Seen {
  method: string
  path: string
  headers: IncomingMessage['headers']
  at: number
}

describe('the hosted API client (a stand-in on 127.0.0.1)', function () {
  this.timeout(60_000)
  let dir: string
  let env: NodeJS.ProcessEnv
  let server: TestServer
  let seen: Seen[]
  /** How the stand-in answers the next requests, one handler per request (the last one repeats). */
  let script: ((res: ServerResponse) => void)[]
  const wallet = Keypair.generate()

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {'content-type': 'application/json', ...headers})
    res.end(JSON.stringify(body))
  }
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli([...args, '--network', 'devnet', '--manager', server.url], {env: {...env, ...extra}})

  before(async () => {
    dir = tempDir('gpunet-hosted-')
    writeFileSync(join(dir, 'wallet.json'), JSON.stringify([...wallet.secretKey]))
    env = {
      GPUNET_WALLET: join(dir, 'wallet.json'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_DATA_HOME: join(dir, 'data'),
      GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
      GPUNET_API_KEY: KEY,
    }
    server = await startServer((req, res) => {
      seen.push({method: req.method!, path: req.url!, headers: req.headers, at: Date.now()})
      req.resume()
      const next = script.length > 1 ? script.shift()! : script[0]!
      next(res)
    })
  })
  beforeEach(() => {
    seen = []
  })
  after(async () => {
    await server?.close()
    removeDir(dir)
  })

  it('presets the network’s public API as the manager of devnet and mainnet', async () => {
    for (const [network, url] of [
      ['devnet', 'https://dashboard.k8s.dev.nos.ci'],
      ['mainnet', 'https://dashboard.k8s.prd.nos.ci'],
    ]) {
      const got = await runCli(['config', 'get', 'manager', '--network', network!, '--json'], {env})
      assert.equal(got.code, 0, got.stderr)
      assert.equal((JSON.parse(got.stdout) as {value: string}).value, url)
    }
  })

  it('reads the balance with the API key as a Bearer header', async () => {
    script = [(res) => json(res, 200, BALANCE)]
    const result = await cli(['credits', 'balance', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as {
      network: string
      manager: string
      credits: Record<string, {amount: number; unit: string; baseUnits: string}>
    }
    assert.equal(report.network, 'devnet')
    assert.equal(report.manager, server.url)
    assert.deepEqual(report.credits.available, {amount: 10.25, unit: 'credit', baseUnits: '10250000'})
    assert.equal(report.credits.assigned!.baseUnits, '12500000')
    assert.equal(seen.length, 1)
    assert.equal(seen[0]!.path, '/api/credits/balance')
    assert.equal(seen[0]!.headers.authorization, `Bearer ${KEY}`)
    assert.equal(seen[0]!.headers['x-user-id'], undefined)

    const human = await cli(['credits', 'balance'])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /Available +10\.25 credits/)
    assert.doesNotMatch(human.stdout + human.stderr, new RegExp(KEY))
  })

  it('drives the hosted deployments with the same commands (the key, or --api-key)', async () => {
    const deployment = {
      id: 'Dep1oyment1111111111111111111111111111111111',
      name: 'llm',
      vault: 'Vau1t11111111111111111111111111111111111111',
      market: 'Market1111111111111111111111111111111111111',
      owner: wallet.publicKey.toBase58(),
      status: 'RUNNING',
      replicas: 2,
      timeout: 120,
      strategy: 'SIMPLE-EXTEND',
      endpoints: [],
      created_at: '2026-11-27T10:00:00.000Z',
      updated_at: '2026-11-27T10:00:00.000Z',
    }
    script = [(res) => json(res, 200, {deployments: [deployment], pagination: {cursor_next: null}})]
    const listed = await cli(['deployment', 'list', '--json'], {GPUNET_API_KEY: ''})
    assert.equal(listed.code, 0, listed.stderr)
    assert.equal(seen[0]!.path.split('?')[0], '/api/deployments')
    assert.equal(seen[0]!.headers['x-user-id'], wallet.publicKey.toBase58())
    const flagKey = 'nos_from_the_flag_0123456789'
    script = [(res) => json(res, 200, deployment)]
    const got = await cli(['deployment', 'get', deployment.id, '--api-key', flagKey, '--json'])
    assert.equal(got.code, 0, got.stderr)
    assert.equal(seen[1]!.path, `/api/deployments/${deployment.id}`)
    assert.equal(seen[1]!.headers.authorization, `Bearer ${flagKey}`, '--api-key before GPUNET_API_KEY')
    assert.equal((JSON.parse(got.stdout) as {network: string}).network, 'devnet')
  })

  it('without a key, signs NosanaApiAuthentication with the wallet (x-user-id)', async () => {
    script = [(res) => json(res, 200, BALANCE)]
    const result = await cli(['credits', 'balance', '--json'], {GPUNET_API_KEY: ''})
    assert.equal(result.code, 0, result.stderr)
    const {authorization, 'x-user-id': user} = seen[0]!.headers
    assert.equal(user, wallet.publicKey.toBase58())
    const [message, signature] = String(authorization).split(':')
    assert.equal(message, 'NosanaApiAuthentication')
    assert.ok(verifySignature(bs58.decode(signature!), Buffer.from(message!), wallet.publicKey.toBytes()))
  })

  it('401: exit 6 with a hint naming the key, the key it echoed redacted', async () => {
    script = [(res) => json(res, 401, {error: `invalid API key ${KEY}`})]
    const result = await cli(['credits', 'balance', '--json'])
    assert.equal(result.code, 6, result.stderr)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; message: string; hint: string; status: number}}
    assert.equal(error.code, 'unauthorized')
    assert.equal(error.status, 401)
    assert.match(error.hint, /--api-key, GPUNET_API_KEY/)
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(KEY))
    assert.match(error.message, /\[redacted\]/)
  })

  it('429 on a POST: waits its Retry-After, sends again with the same Idempotency-Key, then succeeds', async () => {
    script = [
      (res) => json(res, 429, {error: 'slow down'}, {'retry-after': '1'}),
      (res) => json(res, 429, {error: 'slow down'}, {'retry-after': '1'}),
      (res) => json(res, 200, {tx: 'sig1', job: JOB, delisted: true}),
    ]
    const result = await cli(['job', 'stop', JOB, '--credits', '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      Array(3).fill(`POST /api/jobs/${JOB}/stop`),
    )
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']))
    assert.equal(keys.size, 1, 'every try carries the same Idempotency-Key')
    assert.match(String([...keys][0]), /^[0-9a-f-]{36}$/)
    assert.ok(seen[1]!.at - seen[0]!.at >= 950, `waited ${seen[1]!.at - seen[0]!.at} ms for Retry-After: 1`)
    const report = JSON.parse(result.stdout) as {action: string; state: string; signature: string}
    assert.deepEqual([report.action, report.state, report.signature], ['delist', 'STOPPED', 'sig1'])
  })

  it('429 on a GET: waited out by its Retry-After', async () => {
    script = [(res) => json(res, 429, {error: 'slow down'}, {'retry-after': '1'}), (res) => json(res, 200, BALANCE)]
    const result = await cli(['credits', 'balance', '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(seen.length, 2)
    assert.ok(seen[1]!.at - seen[0]!.at >= 950, `waited ${seen[1]!.at - seen[0]!.at} ms for Retry-After: 1`)
  })

  it('429 that does not end: a bounded number of tries, then exit 5', async () => {
    script = [(res) => json(res, 429, {error: 'slow down'}, {'retry-after': '0'})]
    const result = await cli(['job', 'stop', JOB, '--credits', '--json'])
    assert.equal(result.code, 5, result.stderr)
    assert.equal(seen.length, 1 + RATE_LIMIT_RETRIES)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; status: number; hint: string}}
    assert.equal(error.code, 'rate_limited')
    assert.equal(error.status, 429)
    assert.match(error.hint, /still limiting/)
  })

  it('5xx: exit 5 with the status; the body cut and stripped of control sequences', async () => {
    const evil = `\u001b[2J\u001b]0;pwned\u0007boom ${'x'.repeat(5000)}`
    script = [(res) => json(res, 503, {error: evil})]
    const result = await cli(['job', 'stop', JOB, '--credits'])
    assert.equal(result.code, 5)
    assert.match(result.stderr, /boom/)
    assert.match(result.stderr, /HTTP 503/)
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(result.stderr, /[\u0000-\u0008\u000b-\u001f\u007f]/)
    assert.ok(result.stderr.length < 1500, `${result.stderr.length} characters printed`)
    assert.equal(seen.length, 1, 'a 5xx to a POST is not sent again')

    script = [(res) => json(res, 500, 'x'.repeat(5 * 1024 * 1024))]
    const huge = await cli(['credits', 'balance', '--json'])
    assert.equal(huge.code, 5)
    assert.equal((JSON.parse(huge.stdout) as {error: {code: string}}).error.code, 'manager_answer_invalid')
  })
})
