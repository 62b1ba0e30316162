/**
 * Every command's `--json` output against one schema per command and the vocabulary of docs/json.md (issue 25):
 * one document on stdout, amounts as {amount, unit, baseUnits}, one fee shape, errors as {code, message, hint?}.
 * The commands run against one localnet (node off: jobs stay queued), in the order a user would run them.
 */
import {strict as assert} from 'node:assert'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import {z} from 'zod'

import {runCli} from '../helpers/cli.js'
import {useCliSandbox} from '../helpers/cli-localnet.js'

const address = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
const cid = z.string().regex(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/)
const amount = z.strictObject({
  amount: z.number(),
  unit: z.enum(['SOL', 'token', 'credit']),
  baseUnits: z.string().regex(/^\d+$/),
})
const fee = z.strictObject({
  ...amount.shape,
  unit: z.literal('SOL'),
  priority: amount,
  computeUnitPrice: z.string().regex(/^\d+$/),
  computeUnitLimit: z.number().int().positive().nullable(),
})
const error = z.looseObject({
  code: z.string().regex(/^[a-z_]+$/),
  message: z.string().min(1),
  hint: z.string().optional(),
})
const isoTime = z.iso.datetime()
const chainState = z.enum(['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED'])
const outcome = z.enum(['succeeded', 'failed', 'stopped']).nullable()
const jobReport = z.looseObject({
  network: z.literal('localnet'),
  job: address,
  state: chainState,
  status: chainState,
  outcome,
  market: address,
  definition: cid,
  project: address,
  pricePerSecond: amount,
  timeout: z.number().int(),
  totalPrice: amount,
  serviceUrls: z.array(z.looseObject({url: z.string()})),
  node: address.nullable(),
  startedAt: isoTime.nullable(),
  endedAt: isoTime.nullable(),
  durationSeconds: z.number().nullable(),
  cost: amount,
  costSoFar: amount,
  result: cid.nullable(),
})
const wallet = z.strictObject({address, sol: amount, tokens: amount})
/** The network's deployment object (snake_case, as @nosana/api names it), with gpunet's network and manager. */
const deploymentObject = z.looseObject({
  id: z.string(),
  name: z.string(),
  vault: address,
  market: address,
  owner: address,
  status: z.string(),
  replicas: z.number(),
  timeout: z.number(),
  strategy: z.string(),
  endpoints: z.array(z.unknown()),
  active_revision: z.number(),
  active_jobs: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  network: z.literal('localnet'),
  manager: z.string(),
})
const posted = jobReport.extend({wallet, signature: z.string(), fee, warnings: z.array(z.string())})
const localnetStatus = z.looseObject({
  network: z.literal('localnet'),
  running: z.boolean(),
  rpcUrl: z.string().nullable(),
  market: address.nullable(),
  dataDir: z.string(),
  nodes: z.array(
    z.strictObject({
      address,
      state: z.enum(['idle', 'running']),
      job: address.nullable(),
      market: address,
      slug: z.string(),
      left: z.boolean(),
      gpu: z.string(),
      vram: z.number(),
      ram: z.number(),
      country: z.string(),
    }),
  ),
  markets: z.array(z.strictObject({slug: z.string(), address, name: z.string(), nodes: z.number()})),
})
const secretsBase = {network: z.literal('localnet'), url: z.string()}
const market = z.looseObject({
  market: address,
  address,
  pricePerSecond: amount,
  jobTimeout: z.number(),
  queue: z.strictObject({kind: z.enum(['jobs', 'nodes', 'empty']), length: z.number()}),
  nodeStakeMinimum: amount,
  pricePerHour: amount,
  freeNodes: z.number(),
  queuedJobs: z.number(),
  usdPerHour: z.number().nullable(),
  hostManager: z.strictObject({
    slug: z.string().nullable(),
    name: z.string().nullable(),
    type: z.enum(['PREMIUM', 'COMMUNITY', 'OTHER']).nullable(),
    gpu_types: z.array(z.string()).nullable(),
    lowest_vram: z.number().nullable(),
    usd_reward_per_hour: z.number().nullable(),
    network_fee_percentage: z.number().nullable(),
    required_images: z.array(z.string()).nullable(),
  }),
})

/** docs/json.md's vocabulary: the members, those passed through unread, and the deprecated ones with their new names. */
function vocabulary() {
  const text = readFileSync(new URL('../../docs/json.md', import.meta.url), 'utf8')
  const block = (name: string) => {
    const found = new RegExp(`<!-- vocabulary:${name} -->\\n([\\s\\S]*?)<!-- /vocabulary:${name} -->`).exec(text)
    assert.ok(found, `docs/json.md has its vocabulary:${name} list`)
    return found[1]!
  }
  const names = (part: string) => [...part.matchAll(/`([$\w]+)`/g)].map((m) => m[1]!)
  const deprecated = new Map<string, string>()
  for (const row of block('deprecated').split('\n').slice(2)) {
    const cells = row.split('|').map((cell) => cell.trim())
    if (cells.length < 4) continue
    for (const old of names(cells[1]!)) deprecated.set(old, names(cells[3]!)[0]!)
  }
  return {members: new Set(names(block('members'))), passthrough: new Set(names(block('passthrough'))), deprecated}
}
const VOCABULARY = vocabulary()

/**
 * Every member name in a document is in docs/json.md's vocabulary and in camelCase; a deprecated one only beside its
 * new name (a deprecated name that is a member elsewhere, as `address` is a wallet's, is checked as a member).
 */
function checkNames(value: unknown, where: string, problems: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkNames(item, `${where}[${i}]`, problems))
    return
  }
  if (value === null || typeof value !== 'object') return
  const record = value as Record<string, unknown>
  for (const [key, member] of Object.entries(record)) {
    const at = `${where}.${key}`.replace(/\[\d+\]/g, '[]')
    if (!/^[a-z][a-zA-Z0-9]*$/.test(key)) problems.push(`${at}: gpunet's members are camelCase`)
    const known = VOCABULARY.members.has(key) || VOCABULARY.passthrough.has(key)
    const now = known ? undefined : VOCABULARY.deprecated.get(key)
    if (!known && now === undefined) problems.push(`${at}: in none of docs/json.md's lists`)
    if (now !== undefined && !(now in record)) problems.push(`${at}: deprecated, so only beside \`${now}\``)
    // A deprecated member holds what its new name holds, which is checked there.
    if (!VOCABULARY.passthrough.has(key) && now === undefined) checkNames(member, at, problems)
  }
}

/** Members named like the vocabulary's must have its shapes, wherever they are. */
function checkVocabulary(value: unknown, where: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkVocabulary(item, `${where}[${i}]`))
    return
  }
  if (value === null || typeof value !== 'object') return
  const record = value as Record<string, unknown>
  if ('baseUnits' in record && !('priority' in record)) {
    assert.ok(amount.safeParse(record).success, `${where} is an amount: ${JSON.stringify(record)}`)
  }
  for (const [key, member] of Object.entries(record)) {
    if (key === 'fee') assert.ok(fee.safeParse(member).success, `${where}.fee: ${JSON.stringify(member)}`)
    if (key === 'fees') assert.fail(`${where}.fees: a fee is \`fee\` everywhere`)
    if (key === 'error') assert.ok(error.safeParse(member).success, `${where}.error: ${JSON.stringify(member)}`)
    checkVocabulary(member, `${where}.${key}`)
  }
}

describe('every command --json: one schema per command, one vocabulary', function () {
  this.timeout(240_000)
  const box = useCliSandbox()
  const seen = new Set<string>()
  /** Names outside docs/json.md's vocabulary, gathered over every command so one run lists them all. */
  const problems: string[] = []

  /** Runs `argv --json` (exit `code`), checks one document against `schema` and the vocabulary, returns it. */
  async function json<T>(argv: string[], schema: z.ZodType<T>, code = 0, stdin?: string): Promise<T> {
    // Before any `--`: what follows it is the job's command.
    const end = argv.includes('--') ? argv.indexOf('--') : argv.length
    const result = await runCli([...argv.slice(0, end), '--json', ...argv.slice(end)], {env: box.env, stdin})
    assert.equal(result.code, code, `${argv.join(' ')}: ${result.stderr}`)
    const document: unknown = JSON.parse(result.stdout)
    const parsed = schema.safeParse(document)
    assert.ok(parsed.success, `${argv.join(' ')}: ${parsed.success ? '' : z.prettifyError(parsed.error)}`)
    checkVocabulary(document, argv.slice(0, 2).join(' '))
    // A JSON Schema is a document of its own standard, named as it says; a deployment is the network's object, with
    // the network's member names (docs/json.md).
    if (argv[1] !== 'schema' && argv[0] !== 'deployment') checkNames(document, argv.slice(0, 2).join(' '), problems)
    const words = argv.filter((word) => /^[a-z][a-z-]*$/.test(word))
    seen.add(words[0]!).add(words.slice(0, 2).join(' ')).add(words.slice(0, 3).join(' '))
    return document as T
  }
  const failure = z.strictObject({error})

  it('holds for every command a user runs, and for their errors', async () => {
    const status = await json(['localnet', 'start', '--detach', '--no-node'], localnetStatus)
    await json(['localnet', 'status'], localnetStatus)
    await json(
      ['localnet', 'fund', '--tokens', '5'],
      z.looseObject({sol: z.strictObject({added: amount, balance: amount})}),
    )
    await json(['wallet', 'address'], z.strictObject({address, file: z.string()}))
    await json(
      ['wallet', 'balance'],
      z.looseObject({network: z.literal('localnet'), address, sol: amount, tokens: amount}),
    )
    await json(['wallet', 'new', '--wallet', join(box.dir, 'other.json')], z.looseObject({address, file: z.string()}))
    await json(
      ['wallet', 'import', join(box.dir, 'other.json'), '--wallet', join(box.dir, 'copy.json')],
      z.looseObject({address}),
    )
    await json(
      ['config', 'set', 'rpcUrl', 'http://127.0.0.1:9', '--network', 'devnet'],
      z.looseObject({key: z.literal('rpcUrl')}),
    )
    await json(
      ['config', 'get', 'rpcUrl', '--network', 'devnet'],
      z.looseObject({key: z.literal('rpcUrl'), value: z.string()}),
    )
    await json(['config', 'list'], z.looseObject({settings: z.array(z.looseObject({key: z.string()}))}))
    await json(['config', 'unset', 'rpcUrl', '--network', 'devnet'], z.looseObject({removed: z.literal('rpcUrl')}))
    await json(
      ['market', 'list'],
      z.looseObject({defaultMarket: address, tokenUsd: z.number().nullable(), markets: z.array(market)}),
    )
    // Started with --no-node: no node to take out of its queue (exit 7), in the one error shape.
    await json(['localnet', 'node', 'leave', status.market!], failure, 7)
    await json(['localnet', 'node', 'join', status.market!], failure, 7)
    await json(['market', 'get', status.market!], market.extend({queued: z.array(address)}))
    const file = join(box.dir, 'job.json')
    await json(
      ['job', 'init', '--template', 'hello-world', '--out', file],
      z.strictObject({template: z.string(), file: z.string()}),
    )
    await json(
      ['job', 'validate', file],
      z.looseObject({valid: z.literal(true), files: z.array(z.looseObject({errors: z.array(z.unknown())}))}),
    )
    await json(['job', 'schema'], z.looseObject({$schema: z.string()}))
    await json(
      ['job', 'post', file, '--dry-run', '--queue-anyway'],
      z.looseObject({dryRun: z.literal(true), fee, rent: amount, totalPrice: amount}),
    )
    const job = (await json(['job', 'post', file, '--queue-anyway'], posted)).job
    await json(['job', 'run', '--queue-anyway', '--', 'echo', 'hi'], posted)
    await json(['job', 'get', job], jobReport)
    await json(
      ['job', 'list'],
      z.looseObject({jobs: z.array(z.looseObject({job: address, state: chainState, outcome, cost: amount}))}),
    )
    await json(['job', 'extend', job, '--timeout', '8000'], z.looseObject({job: address, charged: amount, fee}))
    await json(['job', 'logs', job], failure, 7)
    // A queued job runs no operation to restart: exit 7, as exec and stats say below.
    await json(['job', 'restart', job, '--op', 'hello'], failure, 7)
    // A queued job runs nothing: refused before any node is asked; a shell needs a terminal.
    await json(['job', 'exec', job, '--', 'true'], failure, 7)
    await json(['job', 'stats', job], failure, 7)
    await json(['job', 'shell', job], failure, 2)
    await json(
      ['job', 'stop', job],
      z.looseObject({job: address, action: z.literal('delist'), state: z.literal('STOPPED'), outcome, fee}),
    )
    await json(
      ['secrets', 'set', '--from-env-file', '-'],
      z.strictObject({
        ...secretsBase,
        secrets: z.array(z.strictObject({name: z.string()})),
        names: z.array(z.string()),
      }),
      0,
      'A=1\n',
    )
    await json(
      ['secrets', 'get'],
      z.strictObject({...secretsBase, secrets: z.array(z.looseObject({name: z.string()}))}),
    )
    await json(
      ['secrets', 'get', 'A'],
      z.strictObject({
        ...secretsBase,
        secrets: z.tuple([z.strictObject({name: z.literal('A'), value: z.literal('1')})]),
        name: z.literal('A'),
        value: z.literal('1'),
      }),
    )
    await json(
      ['secrets', 'delete', 'A', '--yes'],
      z.strictObject({
        ...secretsBase,
        secrets: z.tuple([z.strictObject({name: z.literal('A')})]),
        deleted: z.literal('A'),
      }),
    )
    await json(['completion', 'bash'], z.strictObject({shell: z.literal('bash'), script: z.string()}))
    // Errors of each kind of failure: usage, invalid input, not found.
    await json(['job', 'get', 'not-an-address'], failure, 2)
    await json(['job', 'get', Keypair.generate().publicKey.toBase58()], failure, 7)
    await json(['job', 'post', join(box.dir, 'missing.json')], failure, 3)
    // Deployments, at the localnet's own manager: the network's objects with its member names, plus gpunet's.
    writeFileSync(
      join(box.dir, 'svc.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'svc', type: 'container/run', args: {image: 'ubuntu'}}],
      }),
    )
    const created = await json(
      ['deployment', 'create', '--file', join(box.dir, 'svc.json'), '--timeout', '10m'],
      deploymentObject,
    )
    await json(['deployment', 'get', created.id], deploymentObject.extend({shared_with: z.array(address)}))
    await json(
      ['deployment', 'list'],
      z.strictObject({
        deployments: z.array(deploymentObject),
        pagination: z.looseObject({cursor_next: z.string().nullable()}),
      }),
    )
    await json(
      ['deployment', 'fund', created.id, '--sol', '0.05', '--tokens', '1'],
      z.strictObject({
        network: z.literal('localnet'),
        deployment: z.string(),
        vault: address,
        shared_with: z.array(address),
        signature: z.string(),
        sent: z.strictObject({sol: amount, tokens: amount}),
        balance: z.strictObject({sol: amount, tokens: amount}),
        fee,
      }),
    )
    await json(['deployment', 'start', created.id], deploymentObject)
    await json(['deployment', 'scale', created.id, '2'], deploymentObject)
    await json(['deployment', 'autoscale', created.id, '--off'], deploymentObject)
    await json(['deployment', 'revise', created.id, '--file', join(box.dir, 'svc.json')], deploymentObject)
    await json(['deployment', 'duplicate', created.id, '--name', 'svc-b'], deploymentObject)
    await json(
      ['deployment', 'jobs', created.id],
      z.strictObject({
        deployment: z.string(),
        jobs: z.array(z.looseObject({job: address, state: z.string()})),
        pagination: z.looseObject({}),
      }),
    )
    for (const lines of ['events', 'logs']) {
      // JSON lines: each line one document (logs: none while no replica runs; the node is off here).
      const result = await runCli(['deployment', lines, created.id, '--json'], {env: box.env})
      assert.equal(result.code, 0, result.stderr)
      for (const line of result.stdout.split('\n').filter(Boolean)) {
        assert.ok(
          z.looseObject({type: z.string(), message: z.string(), created_at: z.string()}).safeParse(JSON.parse(line))
            .success,
          line,
        )
      }
      if (lines === 'events') assert.ok(result.stdout.trim().split('\n').length >= 2, result.stdout)
      seen.add(`deployment ${lines}`)
    }
    await json(['deployment', 'stop', created.id, '--yes'], deploymentObject)
    // A stopped deployment changes market at once; one the manager does not know is exit 3, nothing changed.
    await json(['deployment', 'move', created.id, '--market', Keypair.generate().publicKey.toBase58()], failure, 3)
    await json(
      ['deployment', 'withdraw', created.id, '--yes'],
      z.strictObject({
        network: z.literal('localnet'),
        deployment: z.string(),
        vault: address,
        shared_with: z.array(address),
        signature: z.string(),
        returned: z.strictObject({sol: amount, tokens: amount}),
        wallet,
      }),
    )
    await json(
      ['deployment', 'delete', created.id, '--yes'],
      z.strictObject({deleted: z.string(), network: z.literal('localnet'), manager: z.string()}),
    )
    await json(['deployment', 'get', created.id], failure, 7)
    const key = await json(
      ['deployment', 'api-key', 'create', '--name', 'ci'],
      z.strictObject({id: z.string(), name: z.string(), created_at: z.string(), key: z.string(), manager: z.string()}),
    )
    await json(
      ['deployment', 'api-key', 'list'],
      z.strictObject({keys: z.array(z.looseObject({id: z.string()})), manager: z.string()}),
    )
    // Credits, with the key: the localnet's ledger topped up, a job paid by them posted, extended and stopped.
    const keyed = {...box.env, GPUNET_API_KEY: key.key}
    await json(
      ['localnet', 'fund', '--credits', '3'],
      z.looseObject({credits: z.strictObject({added: amount, balance: amount})}),
    )
    const credit = await runCli(['credits', 'balance', '--json'], {env: keyed})
    assert.equal(credit.code, 0, credit.stderr)
    checkVocabulary(JSON.parse(credit.stdout), 'credits balance')
    checkNames(JSON.parse(credit.stdout), 'credits balance', problems)
    seen.add('credits balance')
    const creditJob = await runCli(['job', 'post', file, '--queue-anyway', '--credits', '--json'], {env: keyed})
    assert.equal(creditJob.code, 0, creditJob.stderr)
    const creditPosted = JSON.parse(creditJob.stdout) as {job: string}
    checkNames(creditPosted, 'job post', problems)
    for (const args of [
      ['job', 'extend', creditPosted.job, '--timeout', '8000', '--credits', '--json'],
      ['job', 'stop', creditPosted.job, '--credits', '--json'],
    ]) {
      const result = await runCli(args, {env: keyed})
      assert.equal(result.code, 0, result.stderr)
      checkNames(JSON.parse(result.stdout), args.slice(0, 2).join(' '), problems)
    }
    await json(['deployment', 'api-key', 'revoke', key.id], z.strictObject({revoked: z.string(), manager: z.string()}))
    await json(['localnet', 'stop'], z.looseObject({}))
    await json(['localnet', 'reset', '--yes'], z.looseObject({reset: z.boolean(), restarted: z.boolean()}))
    const outside = [...new Set(problems)]
    assert.equal(outside.length, 0, `members outside docs/json.md's vocabulary:\n${outside.join('\n')}`)
  })

  // `mcp` is a server too, answering JSON-RPC on stdout rather than one --json document (its e2e test: mcp.e2e).
  it('leaves out no command of the manifest but the long-running secrets serve, deployment serve and mcp', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../oclif.manifest.json', import.meta.url), 'utf8')) as {
      commands: Record<string, unknown>
    }
    const all = Object.keys(manifest.commands)
      .map((id) => id.replaceAll(':', ' '))
      .filter((id) => id !== 'secrets serve' && id !== 'deployment serve' && id !== 'mcp')
    assert.ok(all.length > 30, `the manifest lists the commands: ${all.length}`)
    assert.deepEqual(
      all.filter((id) => !seen.has(id)),
      [],
    )
  })
})
