import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Keypair, PublicKey} from '@solana/web3.js'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {decodeJobAccount, ipfsHashToBytes, JobState} from '../../../src/lib/market/index.js'
import {BIN, runCli} from '../../helpers/cli.js'
import {describeAtTerminal, runInTerminal} from '../../helpers/terminal.js'
import {
  type CliSandbox,
  cliSandbox,
  type SandboxChain,
  sandboxChain,
  useCliSandbox,
} from '../../helpers/cli-localnet.js'

/** A definition exposing a port, with the editor hint `job post` strips before upload. */
const DEFINITION = {
  $schema: 'https://gpunet.dev/job-definition.schema.json',
  version: '0.1',
  type: 'container',
  ops: [{id: 'serve', type: 'container/run', args: {image: 'docker.io/library/nginx:1.27', expose: 8080}}],
}

/** The bytes `job post` uploads: the definition without `$schema`, as indented JSON. */
function uploaded(definition: Record<string, unknown>): Uint8Array {
  const rest = {...definition}
  delete rest.$schema
  return new TextEncoder().encode(`${JSON.stringify(rest, null, 2)}\n`)
}

interface PostJson {
  network: string
  job: string
  status: string
  market: string
  definition: string
  pricePerSecond: {amount: number; unit: string; baseUnits: string}
  totalPrice: {amount: number; unit: string; baseUnits: string}
  timeout: number
  serviceUrls: {port: number; url: string}[]
  wallet: {
    address: string
    sol: {amount: number; unit: string}
    tokens: {amount: number; unit: string; baseUnits: string}
  }
}

async function tokenBalance(chain: SandboxChain, owner: PublicKey): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(chain.mint, owner, true)
  if (!(await chain.connection.getAccountInfo(account))) return 0n
  return BigInt((await chain.connection.getTokenAccountBalance(account)).value.amount)
}

describe('gpunet job post', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let chain: SandboxChain
  let file: string

  before(async () => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify(DEFINITION, null, 2))
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    chain = await sandboxChain(box)
  })
  after(async () => {
    await box.cleanup()
  })

  /** `job post` on this localnet, whose node is off on purpose (jobs stay QUEUED): --queue-anyway says so. */
  const post = (args: string[], env = box.env) => runCli(['job', 'post', '--queue-anyway', ...args], {env})

  it('posts a job and prints network, balances, price, total, job address and QUEUED', async () => {
    const tokensBefore = await tokenBalance(chain, chain.wallet.publicKey)
    const result = await post(['--file', file])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /No service URL: the localnet runs no gateway for exposed ports yet\./)
    const job = /^Posted job (\w+) on localnet$/m.exec(result.stdout)?.[1]
    assert.ok(job, result.stdout)
    assert.match(result.stdout, /^ {2}Network +localnet$/m)
    const tokensAfter = Number(tokensBefore - 720_000n) / 1e6
    assert.match(result.stdout, new RegExp(`^ {2}Balance +\\d+\\.\\d+ SOL, ${tokensAfter} tokens$`, 'm'))
    assert.match(result.stdout, /^ {2}Price +0\.0001 tokens\/s$/m)
    assert.match(result.stdout, /^ {2}Timeout +7200 s$/m)
    assert.match(result.stdout, /^ {2}Total price +0\.72 tokens$/m)
    assert.match(result.stdout, new RegExp(`^ {2}Job +${job}$`, 'm'))
    assert.match(result.stdout, /^ {2}State +QUEUED$/m)

    const account = decodeJobAccount((await chain.connection.getAccountInfo(new PublicKey(job)))!.data)
    const cid = computeCidV0(uploaded(DEFINITION)).cid
    assert.deepEqual(account.ipfsJob, ipfsHashToBytes(cid))
    assert.ok(account.market.equals(chain.market))
    assert.equal(account.price, 100n)
    assert.equal(account.timeout, 7200n)
    assert.equal(account.state, JobState.QUEUED)
    assert.ok(account.project.equals(chain.wallet.publicKey))
    // the content store holds the definition without its editor hint
    const stored = (await (await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).json()) as Record<string, unknown>
    assert.equal(stored.$schema, undefined)
    assert.deepEqual(stored.ops, DEFINITION.ops)
  })

  it('posts with --priority-fee on the localnet, paying the floor price (no slot there has a fee to outbid)', async () => {
    const result = await post(['--file', file, '--timeout', '600', '--priority-fee', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const {fee} = JSON.parse(result.stdout) as {
      fee: {computeUnitPrice: string; computeUnitLimit: number | null; priority: {baseUnits: string}; baseUnits: string}
    }
    assert.equal(fee.computeUnitPrice, '10000')
    // The emulated jobs program reports no compute units, so the budget stays at the default 200,000 units.
    const units = BigInt(fee.computeUnitLimit ?? 200_000)
    assert.equal(BigInt(fee.priority.baseUnits), (10_000n * units + 999_999n) / 1_000_000n)
    assert.ok(BigInt(fee.baseUnits) > BigInt(fee.priority.baseUnits))
  })

  it('prints one JSON document with amounts as numbers and units, and get shows the same job', async () => {
    const tokensBefore = await tokenBalance(chain, chain.wallet.publicKey)
    const result = await post(['--file', file, '--timeout', '600', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as PostJson
    assert.equal(report.network, 'localnet')
    assert.equal(report.status, 'QUEUED')
    assert.equal(report.market, chain.market.toBase58())
    assert.deepEqual(report.pricePerSecond, {amount: 0.0001, unit: 'token', baseUnits: '100'})
    assert.deepEqual(report.totalPrice, {amount: 0.06, unit: 'token', baseUnits: '60000'})
    assert.equal(report.timeout, 600)
    assert.deepEqual(report.serviceUrls, [], 'no gateway runs on this localnet')
    assert.equal(report.wallet.address, chain.wallet.publicKey.toBase58())
    const left = tokensBefore - 60_000n
    assert.deepEqual(report.wallet.tokens, {amount: Number(left) / 1e6, unit: 'token', baseUnits: String(left)})
    assert.equal(report.wallet.sol.unit, 'SOL')

    const human = await box.run(['job', 'get', report.job])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, new RegExp(`^ {2}Job +${report.job}$`, 'm'))
    assert.match(human.stdout, /^ {2}State +QUEUED$/m)
    assert.match(human.stdout, new RegExp(`^ {2}Market +${chain.market.toBase58()}$`, 'm'))
    assert.match(human.stdout, /^ {2}Price +0\.0001 tokens\/s$/m)
    assert.match(human.stdout, /^ {2}Cost so far +0 tokens$/m)
    assert.doesNotMatch(human.stdout, /Node|Started|Result/)

    const json = await box.run(['job', 'get', report.job, '--json'])
    assert.equal(json.code, 0, json.stderr)
    const got = JSON.parse(json.stdout) as PostJson & {node: null; result: null; costSoFar: {baseUnits: string}}
    assert.equal(got.job, report.job)
    assert.equal(got.status, 'QUEUED')
    assert.equal(got.definition, report.definition)
    assert.equal(got.node, null)
    assert.equal(got.result, null)
    assert.equal(got.costSoFar.baseUnits, '0')
  })

  it('posts the same file twice as two jobs', async () => {
    const first = JSON.parse((await post(['--file', file, '--timeout', '60', '--json'])).stdout) as PostJson
    const second = JSON.parse((await post(['--file', file, '--timeout', '60', '--json'])).stdout) as PostJson
    assert.notEqual(first.job, second.job)
    assert.equal(first.definition, second.definition)
    for (const job of [first.job, second.job]) {
      assert.ok(await chain.connection.getAccountInfo(new PublicKey(job)), `${job} is on chain`)
    }
  })

  it('exits 4 at once, with what is there and what is needed, when the wallet cannot pay: nothing uploaded or sent', async () => {
    const poor = Keypair.generate()
    const wallet = join(box.dir, 'poor.json')
    writeFileSync(wallet, JSON.stringify([...poor.secretKey]))
    assert.equal(
      (await box.run(['localnet', 'fund', poor.publicKey.toBase58(), '--sol', '1', '--tokens', '0.5'])).code,
      0,
    )
    const unique = {...DEFINITION, meta: {trigger: 'cli', note: 'poor'}}
    const poorFile = join(box.dir, 'poor-job.json')
    writeFileSync(poorFile, JSON.stringify(unique))
    const result = await post(['--file', poorFile, '--wallet', wallet])
    assert.equal(result.code, 4)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: the wallet cannot pay for this job: it has 0\.5 tokens, 0\.72 tokens needed/)
    const cid = computeCidV0(uploaded(unique)).cid
    assert.equal((await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).status, 404, 'not uploaded')
    assert.equal(await chain.connection.getBalance(poor.publicKey), 1_000_000_000, 'no fee paid: nothing sent')
    assert.equal(await tokenBalance(chain, poor.publicKey), 500_000n)

    const json = await post(['--file', poorFile, '--wallet', wallet, '--json'])
    assert.equal(json.code, 4)
    const {error} = JSON.parse(json.stdout) as {error: Record<string, string>}
    assert.equal(error.code, 'insufficient_balance')
    assert.deepEqual([error.tokens, error.tokensNeeded, error.lamports], ['500000', '720000', '1000000000'])
    const dry = await post(['--file', poorFile, '--wallet', wallet, '--dry-run'])
    assert.equal(dry.code, 4, 'a dry run exits as the post would')
    assert.match(dry.stderr, /Error: the wallet cannot pay for this job/)
  })

  it('exits 3 with the validator errors for an invalid definition, sending nothing', async () => {
    const bad = join(box.dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({version: '0.1', type: 'container', ops: []}))
    const before = await chain.connection.getBalance(chain.wallet.publicKey)
    const result = await box.run(['job', 'post', '--file', bad])
    assert.equal(result.code, 3)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: .*bad\.json is not a valid job definition:\n {2}.*bad\.json:1:\d+ ops: /)
    assert.match(result.stderr, /nothing was uploaded or sent/)
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), before)

    const json = await box.run(['job', 'post', '--file', bad, '--json'])
    assert.equal(json.code, 3)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; file: string; errors: unknown[]}}
    assert.equal(error.code, 'invalid_definition')
    // The issues one by one, as job validate --json gives them (issue 25: they were one multi-line message).
    const validated = JSON.parse((await box.run(['job', 'validate', bad, '--json'])).stdout) as {
      files: {errors: unknown[]}[]
    }
    assert.equal(error.file, bad)
    assert.ok(error.errors.length > 0)
    assert.deepEqual(error.errors, validated.files[0]!.errors)
  })

  it('--wait gives up with exit 124 when no node takes the job in time', async () => {
    const result = await post(['--file', file, '--timeout', '60', '--wait', '--wait-timeout', '1'])
    assert.equal(result.code, 124)
    // The job goes on: its report is printed, then why the wait stopped.
    assert.match(result.stdout, /^Posted job \w+ on localnet$/m)
    assert.match(result.stderr, /Error: job \w+ is still QUEUED after 1 s/)
    assert.match(result.stderr, /Hint: follow it with `gpunet job get \w+ --wait`/)
    const json = await post(['--file', file, '--timeout', '60', '--wait', '--wait-timeout', '1', '--json'])
    assert.equal(json.code, 124)
    const report = JSON.parse(json.stdout) as PostJson & {
      error: {code: string; job: string; status: string; timeout: number}
    }
    const {error} = report
    assert.equal(error.code, 'wait_timeout')
    assert.deepEqual([report.job, report.status], [error.job, 'QUEUED'], 'the job report, as exit 8 gives it')
    assert.deepEqual([error.status, error.timeout], ['QUEUED', 1])
    assert.ok(
      await chain.connection.getAccountInfo(new PublicKey(error.job)),
      'the job address is a field of the error',
    )
  })

  it('-q prints the job address alone on stdout; with --json or --dry-run it is exit 2', async () => {
    const quiet = await post(['-q', file, '--timeout', '60'])
    assert.equal(quiet.code, 0, quiet.stderr)
    const job = quiet.stdout.trim()
    assert.equal(quiet.stdout, `${job}\n`)
    const account = await chain.connection.getAccountInfo(new PublicKey(job))
    assert.equal(decodeJobAccount(account!.data).state, JobState.QUEUED, 'the address is the posted job')
    for (const other of ['--json', '--dry-run']) {
      const both = await post(['-q', other, file])
      assert.equal(both.code, 2)
      assert.match(both.stderr + both.stdout, new RegExp(`${other} cannot be used with --quiet`))
    }
  })

  it('takes the definition as FILE or --file, once: none, or two different files, is exit 2', async () => {
    const none = await post(['--json'])
    assert.equal(none.code, 2)
    assert.deepEqual(JSON.parse(none.stdout).error, {
      code: 'usage',
      message: 'no definition file given',
      hint: 'gpunet job post FILE (or --file FILE; - reads standard input)',
    })
    const two = await post([file, '--file', join(box.dir, 'other.json')])
    assert.equal(two.code, 2)
    assert.match(two.stderr, /^Error: two definition files given: .*job\.json and --file .*other\.json$/m)
  })

  it('exits 7 for a --market that holds no market, before anything is uploaded', async () => {
    const result = await post(['--file', file, '--market', Keypair.generate().publicKey.toBase58(), '--json'])
    assert.equal(result.code, 7)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, 'market_not_found')
  })

  it('get exits 7 for an address that holds no job', async () => {
    const result = await box.run(['job', 'get', Keypair.generate().publicKey.toBase58()])
    assert.equal(result.code, 7)
    assert.match(result.stderr, /Error: no job at \w+ on this network/)
    const unknown = Keypair.generate().publicKey.toBase58()
    const json = await box.run(['job', 'get', unknown, '--json'])
    assert.equal(json.code, 7)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; job: string}}
    assert.deepEqual([error.code, error.job], ['job_not_found', unknown])
  })

  it('refuses a job no localnet node would run (exit 5, nothing uploaded or sent), unless --queue-anyway', async () => {
    const unique = {...DEFINITION, meta: {note: 'no node'}}
    const lonely = join(box.dir, 'lonely.json')
    writeFileSync(lonely, JSON.stringify(unique))
    const lamports = await chain.connection.getBalance(chain.wallet.publicKey)
    const human = await box.run(['job', 'post', '--file', lonely])
    assert.equal(human.code, 5)
    assert.equal(human.stdout, '')
    assert.equal(
      human.stderr,
      'Error: no localnet node would run this job: the localnet was started with --no-node\n' +
        'Hint: restart it with its node (`gpunet localnet stop && gpunet localnet start --detach`), or pass ' +
        '--queue-anyway to post it all the same (it stays QUEUED until a node takes it)\n',
    )
    const json = await box.run(['job', 'post', '--file', lonely, '--json'])
    assert.equal(json.code, 5)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'no_node')
    const dry = await box.run(['job', 'post', '--file', lonely, '--dry-run'])
    assert.equal(dry.code, 5, 'a dry run refuses it too')
    const cid = computeCidV0(uploaded(unique)).cid
    assert.equal((await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).status, 404, 'not uploaded')
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), lamports, 'nothing sent')

    const anyway = await post(['--file', lonely, '--timeout', '60', '--json'])
    assert.equal(anyway.code, 0, anyway.stderr)
    assert.deepEqual((JSON.parse(anyway.stdout) as {warnings: string[]}).warnings, [
      'no localnet node would run this job: the localnet was started with --no-node',
    ])
    assert.match(anyway.stderr, /^Warning: no localnet node would run this job: .* \(--queue-anyway\)$/m)
  })

  it('--dry-run runs every check and prints the quote, uploading and sending nothing', async () => {
    const unique = {...DEFINITION, meta: {note: 'dry run'}}
    const dryFile = join(box.dir, 'dry.json')
    writeFileSync(dryFile, JSON.stringify(unique))
    const lamports = await chain.connection.getBalance(chain.wallet.publicKey)
    const tokens = await tokenBalance(chain, chain.wallet.publicKey)
    const cid = computeCidV0(uploaded(unique)).cid

    const human = await post(['--file', dryFile, '--timeout', '600', '--dry-run'])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^Dry run: the job can be posted on localnet; nothing was uploaded or sent$/m)
    assert.match(human.stdout, new RegExp(`^ {2}Definition +${cid}$`, 'm'))
    assert.match(human.stdout, /^ {2}Total price +0\.06 tokens$/m)
    assert.match(human.stdout, /^ {2}Fees +0\.000015 SOL \(and 0\.\d+ SOL rent for the job and run accounts\)$/m)

    // The file as an argument (issue 25: `job post FILE` was "not a gpunet command").
    const json = await post([dryFile, '--timeout', '600', '--dry-run', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const report = JSON.parse(json.stdout) as Record<string, unknown>
    assert.equal(report.dryRun, true)
    assert.equal(report.definition, cid)
    assert.equal(report.market, chain.market.toBase58())
    assert.deepEqual(report.totalPrice, {amount: 0.06, unit: 'token', baseUnits: '60000'})
    assert.deepEqual(report.fee, {
      amount: 0.000015,
      unit: 'SOL',
      baseUnits: '15000',
      priority: {amount: 0, unit: 'SOL', baseUnits: '0'},
      computeUnitPrice: '0',
      computeUnitLimit: (report.fee as {computeUnitLimit: number}).computeUnitLimit,
    })
    assert.equal((report.rent as {unit: string}).unit, 'SOL')
    assert.deepEqual(report.secrets, [])
    assert.equal((report.wallet as {tokens: {baseUnits: string}}).tokens.baseUnits, String(tokens))

    assert.equal((await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).status, 404, 'not uploaded')
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), lamports, 'nothing sent')
    assert.equal(await tokenBalance(chain, chain.wallet.publicKey), tokens)
  })

  it('checks the secrets a job refers to before paying: exit 3 naming the missing ones, --no-secrets-check skips', async () => {
    const secretFile = join(box.dir, 'secret-job.json')
    const args = {
      image: 'x',
      env: {A: '%%secrets.STORED_ONE%%', B: '%%secrets.MISSING_ONE%%', C: '%%secrets.MISSING_TWO%%'},
    }
    writeFileSync(secretFile, JSON.stringify({...DEFINITION, ops: [{id: 'a', type: 'container/run', args}]}))
    assert.equal((await runCli(['secrets', 'set', 'STORED_ONE'], {env: box.env, stdin: 'v'})).code, 0)
    const lamports = await chain.connection.getBalance(chain.wallet.publicKey)
    const human = await post(['--file', secretFile])
    assert.equal(human.code, 3)
    assert.equal(human.stdout, '')
    assert.match(
      human.stderr,
      /^Error: the job refers to secrets you have not stored on localnet: MISSING_ONE, MISSING_TWO$/m,
    )
    assert.match(
      human.stderr,
      /^Hint: store each with `gpunet secrets set MISSING_ONE` .*nothing was uploaded or sent$/m,
    )
    const json = await post(['--file', secretFile, '--dry-run', '--json'])
    assert.equal(json.code, 3)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; missing: string[]}}
    assert.deepEqual([error.code, error.missing], ['secret_missing', ['MISSING_ONE', 'MISSING_TWO']])
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), lamports, 'nothing sent')

    const skipped = await post(['--file', secretFile, '--no-secrets-check', '--dry-run', '--json'])
    assert.equal(skipped.code, 0, skipped.stderr)
    assert.deepEqual((JSON.parse(skipped.stdout) as {secrets: string[]}).secrets, [])
    assert.equal((await runCli(['secrets', 'set', 'MISSING_ONE', '--value', 'v'], {env: box.env})).code, 0)
    assert.equal((await runCli(['secrets', 'set', 'MISSING_TWO', '--value', 'v'], {env: box.env})).code, 0)
    const stored = await post(['--file', secretFile, '--dry-run', '--json'])
    assert.equal(stored.code, 0, stored.stderr)
    assert.deepEqual((JSON.parse(stored.stdout) as {secrets: string[]}).secrets, [
      'MISSING_ONE',
      'MISSING_TWO',
      'STORED_ONE',
    ])
  })

  // CI runners cancel a step with SIGTERM; a closed terminal sends SIGHUP. Each stops following as Ctrl+C does.
  const stops = [
    {signal: 'SIGINT', code: 130, json: false},
    {signal: 'SIGTERM', code: 143, json: true},
    {signal: 'SIGTERM', code: 143, json: false},
    {signal: 'SIGHUP', code: 129, json: true},
  ] as const
  for (const {signal, code, json} of stops) {
    it(`${signal} during --wait${json ? ' --json' : ''} stops following with exit ${code}: the job's report, how to follow it, the job goes on`, async () => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'job',
          'post',
          '--queue-anyway',
          '--file',
          file,
          '--timeout',
          '60',
          '--wait',
          ...(json ? ['--json'] : []),
        ],
        {env: {...process.env, NO_COLOR: '1', ...box.env}},
      )
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
      const following = new Promise<void>((resolve) =>
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr += d
          if (/is QUEUED\n/.test(stderr)) resolve()
        }),
      )
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await following
      child.kill(signal)
      assert.equal(await exited, code, stderr)
      const job = /Job (\w+) is QUEUED/.exec(stderr)![1]!
      const by = signal === 'SIGINT' ? '' : ` (${signal})`
      const message = `Stopped following job ${job}${by}; the job goes on (QUEUED).`
      const hint = `follow it again with \`gpunet job get ${job} --wait\`, or end it with \`gpunet job stop ${job}\``
      if (json) {
        const report = JSON.parse(stdout) as PostJson & {error: Record<string, unknown>}
        assert.equal(report.job, job)
        assert.equal(report.status, 'QUEUED')
        assert.equal(report.network, 'localnet')
        assert.deepEqual(report.error, {
          code: 'wait_interrupted',
          message,
          hint,
          job,
          state: 'QUEUED',
          status: 'QUEUED',
          signal,
        })
      } else {
        assert.match(stdout, new RegExp(`^Posted job ${job} on localnet$`, 'm'))
        assert.match(stderr, new RegExp(`^${message.replace(/[().]/g, '\\$&')}$`, 'm'))
        assert.match(stderr, new RegExp(`^Hint: follow it again with \`gpunet job get ${job} --wait\``, 'm'))
        assert.doesNotMatch(stderr, /Error:/)
      }
      const account = decodeJobAccount((await chain.connection.getAccountInfo(new PublicKey(job)))!.data)
      assert.equal(account.state, JobState.QUEUED, 'the job goes on')
    })
  }

  it('SIGTERM during job get --wait --json prints the job report with the error: exit 143', async () => {
    const posted = await post(['--file', file, '--timeout', '60', '--json'])
    const {job} = JSON.parse(posted.stdout) as PostJson
    const child = spawn(process.execPath, [BIN, 'job', 'get', job, '--wait', '--json'], {
      env: {...process.env, NO_COLOR: '1', ...box.env},
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    const following = new Promise<void>((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d
        if (/is QUEUED\n/.test(stderr)) resolve()
      }),
    )
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await following
    child.kill('SIGTERM')
    assert.equal(await exited, 143, stderr)
    const report = JSON.parse(stdout) as {job: string; status: string; error: {code: string; signal: string}}
    assert.deepEqual(
      [report.job, report.status, report.error.code, report.error.signal],
      [job, 'QUEUED', 'wait_interrupted', 'SIGTERM'],
    )
  })
})

describe('gpunet job post on devnet and mainnet', function () {
  this.timeout(30_000)
  let box: CliSandbox
  let file: string

  before(() => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
  })
  /** Every setting a devnet post needs but the RPC node, which tests point at a port where nothing listens. */
  // Nothing but a content store: the rewards accounts are derived per network.
  const devnetEnv = () => ({...box.env, GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:9'})
  after(async () => {
    await box.cleanup()
  })

  it('refuses a definition over 1 MiB as posted (exit 3) before any network call, so no node is refused its secrets', async () => {
    const args = {image: 'x', env: {BIG: 'x'.repeat(1024 * 1024)}}
    writeFileSync(
      file,
      JSON.stringify({version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args}]}),
    )
    const post = ['job', 'post', '--file', file, '--network', 'devnet', '--rpc', 'http://127.0.0.1:9', '--json']
    const result = await runCli(post, {env: devnetEnv()})
    assert.equal(result.code, 3, result.stderr)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; message: string; hint: string}}
    assert.equal(error.code, 'definition_too_large')
    assert.match(error.message, /^the job definition is 10\d{5} bytes as posted; the limit is 1048576 bytes \(1 MiB\)$/)
    assert.match(error.hint, /nothing was uploaded or sent/)
  })

  it('names every content store setting when none is set, before any network call (exit 2)', async () => {
    const {ops} = DEFINITION
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [{...ops[0], args: {image: 'x'}}]}))
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...Keypair.generate().secretKey]))
    const args = ['job', 'post', '--file', file, '--network', 'mainnet', '--rpc', 'http://127.0.0.1:9', '--json']
    const result = await box.run(args)
    rmSync(box.env.GPUNET_WALLET!)
    assert.equal(result.code, 2, result.stdout)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; hint: string}}
    assert.equal(error.code, 'content_store_missing')
    for (const way of [
      'GPUNET_PINATA_JWT',
      'GPUNET_PINNING_SERVICE_URL',
      'GPUNET_CONTENT_STORE_URL',
      'config set pinataJwt --network mainnet',
    ]) {
      assert.ok(error.hint.includes(way), `${way} in ${error.hint}`)
    }
  })

  it('refuses a missing wallet off localnet without creating one, then exits 5 naming an RPC node it cannot reach', async () => {
    const env = devnetEnv()
    writeFileSync(file, JSON.stringify({...DEFINITION, ops: [{...DEFINITION.ops[0], args: {image: 'x'}}]}))
    const args = ['job', 'post', '--file', file, '--network', 'devnet', '--rpc', 'http://127.0.0.1:9']
    const missing = await runCli(args, {env})
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /Error: cannot read the wallet .*wallet\.json: no such file/)
    assert.equal(existsSync(box.env.GPUNET_WALLET!), false)

    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...Keypair.generate().secretKey]))
    const result = await runCli(args, {env})
    assert.equal(result.code, 5, result.stderr)
    assert.match(result.stderr, /Error: the Solana RPC node http:\/\/127\.0\.0\.1:9 failed/)
  })

  it('checks the secrets a job refers to off localnet too: an unreachable service exits 5 and says --no-secrets-check', async () => {
    const env = {...devnetEnv(), GPUNET_WALLET: join(box.dir, 'devnet-wallet.json')}
    writeFileSync(env.GPUNET_WALLET, JSON.stringify([...Keypair.generate().secretKey]))
    const args = {image: 'x', env: {HF_TOKEN: '%%secrets.HF_TOKEN%%'}}
    writeFileSync(file, JSON.stringify({...DEFINITION, ops: [{id: 'a', type: 'container/run', args}]}))
    const post = ['job', 'post', '--file', file, '--network', 'devnet', '--rpc', 'http://127.0.0.1:9', '--json']
    const unreachable = await runCli([...post, '--secrets-url', 'http://127.0.0.1:9'], {env})
    assert.equal(unreachable.code, 5)
    const down = (JSON.parse(unreachable.stdout) as {error: {code: string; hint: string}}).error
    assert.equal(down.code, 'secrets_unreachable')
    assert.match(down.hint, /--no-secrets-check/)

    // Skipped, the post goes on to the next check: here the RPC node, which cannot be reached either.
    const skipped = await runCli([...post, '--no-secrets-check'], {env})
    assert.equal(skipped.code, 5)
    assert.equal((JSON.parse(skipped.stdout) as {error: {code: string}}).error.code, 'rpc_failed')
  })
})

describe('gpunet job get without a running localnet', function () {
  this.timeout(30_000)
  const box = useCliSandbox()

  it('starts one in the background, says so on stderr, and exits 7 for an unknown job', async () => {
    const result = await box.run(['job', 'get', Keypair.generate().publicKey.toBase58()])
    assert.equal(result.code, 7)
    assert.match(result.stderr, /^Started a localnet in the background at http:\/\/127\.0\.0\.1:\d+ /)
    assert.equal(result.stdout, '')
  })
})

describeAtTerminal('gpunet job post --wait at a terminal', function () {
  this.timeout(60_000)
  const box = useCliSandbox()

  it('Ctrl+C stops following (exit 130) and says how to follow the job again', async () => {
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    const file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify({...DEFINITION, ops: [{...DEFINITION.ops[0], args: {image: 'x'}}]}))
    const args = ['job', 'post', '--queue-anyway', '--file', file, '--timeout', '60', '--wait']
    const result = await runInTerminal(args, box.env, 'is QUEUED', '\x03')
    assert.equal(result.code, 130, JSON.stringify(result.output))
    const job = /Job (\w+) is QUEUED/.exec(result.output)![1]!
    assert.match(result.output, new RegExp(`Stopped following job ${job}; the job goes on \\(QUEUED\\)\\.`))
    assert.match(result.output, new RegExp(`Hint: follow it again with \`gpunet job get ${job} --wait\``))
  })
})
