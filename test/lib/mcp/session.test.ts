/**
 * A session's calls with a stand-in for the command runner (no process): the quote flow refuses every way around
 * it without running the paying command, the caps and the duplicate guard hold, bad arguments never run anything,
 * and a session's secrets never reach a result.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {BadArguments, MAX_INPUT_BYTES} from '../../../src/lib/mcp/arguments.js'
import type {ManifestCommand} from '../../../src/lib/mcp/catalog.js'
import {QUOTE_TTL_MS} from '../../../src/lib/mcp/quotes.js'
import type {CommandOutput, RunOptions} from '../../../src/lib/mcp/run-command.js'
import {McpSession, UnknownTool} from '../../../src/lib/mcp/session.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {manifestCommands} from '../../helpers/manifest.js'

const WALLET = '9wFFyRfZBsuAha4YcuxcXLKwMxJR43S7fPfQLusDBzvT'
const JOB = 'Fx2mVXJrM1kq4RkWrcEbkEbHYpyBNFSnnD4Bq2eSqfGm'

/** What `job post --dry-run --json` prints, at a price. */
function dryRun(total: number) {
  return {
    dryRun: true,
    wallet: {address: WALLET},
    totalPrice: {amount: total, unit: 'token', baseUnits: String(total * 1e6)},
    fee: {amount: 0.000005, unit: 'SOL'},
    rent: {amount: 0.002, unit: 'SOL'},
  }
}

describe('gpunet mcp session', function () {
  this.timeout(60_000)
  let commands: ManifestCommand[]
  let dir: string
  let file: string
  let runs: string[][]
  let price: number
  let clock: number
  let postExit: number

  before(async () => {
    commands = await manifestCommands()
  })
  beforeEach(() => {
    dir = tempDir('gpunet-mcp-')
    file = join(dir, 'job.json')
    writeFileSync(file, '{"version": "0.1", "type": "container", "ops": []}')
    runs = []
    price = 3
    clock = 1_000_000
    postExit = 0
  })
  afterEach(() => removeDir(dir))

  /** A session whose commands are answered by a stand-in that records every run. */
  function session(options: {maxSpend?: number; maxCredits?: number; secrets?: string[]} = {}) {
    const run = async ({words, tail}: RunOptions): Promise<CommandOutput> => {
      runs.push(tail?.length ? [...words, '|', ...tail] : words)
      if (words.includes('--dry-run')) return {exitCode: 0, document: dryRun(price)}
      if (words[0] === 'job' && words[1] === 'post') {
        await new Promise((resolve) => setTimeout(resolve, 5))
        return {exitCode: postExit, document: {job: JOB, posted: true}}
      }
      if (words[0] === 'config')
        return {exitCode: 0, document: {apiKey: 'key-abcdef-123', nested: ['x key-abcdef-123']}}
      if (words[0] === 'job' && words[1] === 'validate') return {exitCode: 3, document: {valid: false}}
      return {exitCode: 0, document: {ok: true}}
    }
    return new McpSession({commands, network: 'localnet', env: {}, run, now: () => clock, ...options})
  }
  const acted = () => runs.filter((words) => words[1] === 'post' && !words.includes('--dry-run'))

  it('answers a paying call with a quote first, and acts only with it', async () => {
    const mcp = session()
    const first = await mcp.call('job_post', {file, timeout: '60'})
    assert.equal(first.isError, false)
    const quote = first.document.quote as {id: string; cost: {tokens: number; sol: number}; from: string}
    assert.equal(quote.cost.tokens, 3)
    assert.equal(quote.cost.sol, 0.002005)
    assert.equal(quote.from, `wallet ${WALLET}`)
    assert.deepEqual(acted(), [], 'the quote ran only the dry run')
    assert.deepEqual(runs, [['job', 'post', `--file=${file}`, '--timeout=60', '--dry-run']])

    const second = await mcp.call('job_post', {file, timeout: '60', quote: quote.id})
    assert.equal(second.isError, false)
    assert.deepEqual(second.document, {job: JOB, posted: true})
    assert.deepEqual(acted(), [['job', 'post', `--file=${file}`, '--timeout=60', '--yes']])
    assert.equal(mcp.book.spent.tokens, 3)
  })

  it('refuses a paying call without its quote, with another call’s, with changed arguments, expired or used', async () => {
    const mcp = session()
    const refused = async (args: Record<string, unknown>, tool = 'job_post') => {
      const answer = await mcp.call(tool, args)
      assert.equal(answer.isError, true)
      return (answer.document.error as {code: string}).code
    }
    assert.equal(await refused({file, quote: 'no-such-quote'}), 'quote_unknown')
    const stop = (await mcp.call('job_stop', {job: JOB})).document.quote as {id: string}
    assert.equal(await refused({file, quote: stop.id}), 'quote_other_call')
    const post = (await mcp.call('job_post', {file, timeout: '60'})).document.quote as {id: string}
    assert.equal(await refused({file, timeout: '120', quote: post.id}), 'quote_arguments_changed')
    // The same arguments, but the file changed under them.
    writeFileSync(file, '{"version": "0.1", "type": "container", "ops": [], "x": 1}')
    assert.equal(await refused({file, timeout: '60', quote: post.id}), 'quote_arguments_changed')
    // The same arguments, the price moved since the quote.
    writeFileSync(file, '{"version": "0.1", "type": "container", "ops": []}')
    price = 4
    assert.equal(await refused({file, timeout: '60', quote: post.id}), 'quote_arguments_changed')
    const late = (await mcp.call('job_post', {file, timeout: '60'})).document.quote as {id: string}
    clock += QUOTE_TTL_MS + 1
    assert.equal(await refused({file, timeout: '60', quote: late.id}), 'quote_expired')
    const without = await mcp.call('job_post', {file, timeout: '60'})
    assert.ok(without.document.quote, 'a call without a quote gets one, and does not act')
    assert.deepEqual(acted(), [], 'nothing was posted')
  })

  it('refuses a quote used once already, and the same definition posted again within 10 minutes', async () => {
    const mcp = session()
    const quote = (await mcp.call('job_post', {file})).document.quote as {id: string}
    assert.equal((await mcp.call('job_post', {file, quote: quote.id})).isError, false)
    const again = await mcp.call('job_post', {file, quote: quote.id})
    assert.equal((again.document.error as {code: string}).code, 'duplicate_post')
    const forced = await mcp.call('job_post', {file, allowDuplicate: true, quote: quote.id})
    assert.equal((forced.document.error as {code: string}).code, 'quote_used')
    const fresh = (await mcp.call('job_post', {file, allowDuplicate: true})).document.quote as {id: string}
    assert.equal((await mcp.call('job_post', {file, allowDuplicate: true, quote: fresh.id})).isError, false)
    clock += 10 * 60 * 1000 + 1
    assert.ok((await mcp.call('job_post', {file})).document.quote, 'after 10 minutes it may be posted again')
    assert.equal(acted().length, 2)
  })

  it('refuses a call over --max-spend, at the quote and when it would act, and one it cannot price', async () => {
    const mcp = session({maxSpend: 5})
    const quote = (await mcp.call('job_post', {file})).document.quote as {id: string}
    assert.equal((await mcp.call('job_post', {file, quote: quote.id})).isError, false)
    const over = await mcp.call('job_post', {file, allowDuplicate: true})
    assert.equal(over.isError, true)
    assert.equal((over.document.error as {code: string}).code, 'over_cap')
    assert.match((over.document.error as {message: string}).message, /costs 3 tokens; the session spent 3 of the 5/)
    // An extension is priced by its own dry run; one paid by credits cannot be priced before it acts.
    const extend = await mcp.call('job_extend', {job: JOB, timeout: '2h'})
    assert.equal((extend.document.error as {code: string}).code, 'over_cap')
    assert.deepEqual(runs.at(-1), ['job', 'extend', '--timeout=2h', JOB, '--dry-run'])
    // Credits are not tokens: under --max-spend alone such a call is quoted; under --max-credits it is refused.
    const credits = await mcp.call('job_extend', {job: JOB, timeout: '2h', credits: true})
    assert.deepEqual((credits.document.quote as {cost: unknown}).cost, {tokens: 0, sol: 0, credits: null})
    const capped = await session({maxCredits: 10}).call('job_extend', {job: JOB, timeout: '2h', credits: true})
    assert.equal((capped.document.error as {code: string}).code, 'unpriced')
    assert.equal(acted().length, 1)
    assert.equal(mcp.book.spent.tokens, 3)
  })

  it('counts a call against the cap before it runs: of two quoted calls acting at once, the cap lets one', async () => {
    const mcp = session({maxSpend: 5})
    const first = (await mcp.call('job_post', {file, timeout: '60'})).document.quote as {id: string}
    const second = (await mcp.call('job_post', {file, timeout: '90', allowDuplicate: true})).document.quote as {
      id: string
    }
    const answers = await Promise.all([
      mcp.call('job_post', {file, timeout: '60', quote: first.id}),
      mcp.call('job_post', {file, timeout: '90', allowDuplicate: true, quote: second.id}),
    ])
    assert.deepEqual(
      answers.map((answer) => answer.isError),
      [false, true],
    )
    assert.equal((answers[1]!.document.error as {code: string}).code, 'over_cap')
    assert.equal(acted().length, 1)
    assert.equal(mcp.book.spent.tokens, 3)
  })

  it('gives back what a call counted when its exit code says nothing was sent, and only then', async () => {
    const mcp = session()
    postExit = 4 // the wallet cannot pay: nothing sent
    const poor = (await mcp.call('job_post', {file})).document.quote as {id: string}
    assert.equal((await mcp.call('job_post', {file, quote: poor.id})).isError, true)
    assert.deepEqual(mcp.book.spent, {tokens: 0, sol: 0, credits: 0})
    postExit = 8 // posted and paid; --wait saw the job fail
    const paid = (await mcp.call('job_post', {file})).document.quote as {id: string}
    assert.equal((await mcp.call('job_post', {file, quote: paid.id})).isError, true)
    assert.equal(mcp.book.spent.tokens, 3)
    assert.equal(((await mcp.call('job_post', {file})).document.error as {code: string}).code, 'duplicate_post')
  })

  it('quotes what it destroys at no cost, and a deployment create only with --start', async () => {
    const mcp = session()
    const stop = await mcp.call('localnet_stop', {})
    assert.deepEqual((stop.document.quote as {cost: unknown}).cost, {tokens: 0, sol: 0, credits: 0})
    assert.deepEqual(runs, [], 'a destroying call runs nothing before its quote')
    const create = await mcp.call('deployment_create', {file, replicas: '1', timeout: '60'})
    assert.deepEqual(create.document, {ok: true})
    const started = await mcp.call('deployment_create', {file, replicas: '1', timeout: '60', start: true})
    assert.ok(started.document.quote)
  })

  it('gives `job run` its command words after --, with every flag of gpunet before them', async () => {
    const mcp = session()
    const args = {command: ['sh', '-c', 'echo --wait --yes'], timeout: '60', wait: true}
    const quote = (await mcp.call('job_run', args)).document.quote as {id: string; action: string}
    assert.equal(quote.action, "gpunet job run --timeout=60 --wait -- sh -c 'echo --wait --yes' (network localnet)")
    await mcp.call('job_run', {...args, quote: quote.id})
    const dry = ['job', 'run', '--timeout=60', '--dry-run', '|', '--', 'sh', '-c', 'echo --wait --yes']
    // Priced at the quote, priced again when it acts (the price it is bound to), then run.
    assert.deepEqual(runs, [
      dry,
      dry,
      ['job', 'run', '--timeout=60', '--wait', '--yes', '|', '--', 'sh', '-c', 'echo --wait --yes'],
    ])
    await assert.rejects(mcp.call('job_run', {command: 'sh'}), /list of strings/)
  })

  it('answers a command’s failure as an error result with its document', async () => {
    const answer = await session().call('job_validate', {file})
    assert.deepEqual(answer, {document: {valid: false}, isError: true})
  })

  it('refuses unknown tools and bad arguments before anything runs', async () => {
    const mcp = session()
    await assert.rejects(mcp.call('job_nope', {}), UnknownTool)
    await assert.rejects(mcp.call('job_post', {file, network: 'mainnet'}), /takes no argument "network"/)
    await assert.rejects(mcp.call('job_post', {file, rpc: 'http://x'}), BadArguments)
    await assert.rejects(mcp.call('job_get', {job: '--network=mainnet'}), /may not start with "-"/)
    await assert.rejects(mcp.call('job_validate', {file: '-'}), /standard input/)
    await assert.rejects(mcp.call('job_get', {}), /needs the argument "job"/)
    await assert.rejects(mcp.call('job_post', {file, wait: 'yes'}), /true or false/)
    await assert.rejects(mcp.call('job_list', {state: 'NOPE'}), /one of/)
    await assert.rejects(mcp.call('job_logs', {job: JOB, maxLines: 0}), /whole number/)
    await assert.rejects(mcp.call('job_post', {file: 'x'.repeat(MAX_INPUT_BYTES)}), /over the 1048576 \(1 MiB\)/)
    writeFileSync(file, Buffer.alloc(MAX_INPUT_BYTES + 1, 0x20))
    await assert.rejects(mcp.call('job_post', {file}), /over 1 MiB/)
    assert.deepEqual(runs, [])
  })

  it('takes a session secret out of every result', async () => {
    const answer = await session({secrets: ['key-abcdef-123']}).call('config_list', {})
    assert.deepEqual(answer.document, {apiKey: '[redacted]', nested: ['x [redacted]']})
  })
})
