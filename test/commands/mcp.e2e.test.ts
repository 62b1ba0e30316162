/**
 * `gpunet mcp` over stdio with the SDK's own client, unmodified, on a localnet (its node on host processes): the
 * tools are the commands (each excluded one with its reason), a definition validated, posted through a quote and
 * followed to its result, each result equal to the command's own `--json` output (times and signatures aside);
 * and the quote flow's refusals, after which the chain shows nothing paid.
 */
import {strict as assert} from 'node:assert'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'

import {BIN, runCli} from '../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../helpers/cli-localnet.js'

type ToolResult = {
  structuredContent?: Record<string, unknown>
  content: {type: string; text?: string}[]
  isError?: boolean
}

/** A document with what differs from run to run (times, signatures, slots, balances moving) taken out. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable)
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(
          ([key]) =>
            !/(^|_)(time|at|signature|slot|started|ended|elapsed|duration|seconds)|At$|Time$|[Ss]ignature|[Ss]lot/.test(
              key,
            ),
        )
        .map(([key, member]) => [key, stable(member)]),
    )
  }
  return value
}

describe('gpunet mcp over stdio, with the SDK client, on a localnet (end to end)', function () {
  this.timeout(180_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let client: Client
  let definition: string

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({name, arguments: args}, undefined, {timeout: 120_000})) as ToolResult
  const cli = async (args: string[]) => {
    const run = await runCli([...args, '--json'], {env})
    return {code: run.code, document: JSON.parse(run.stdout) as unknown}
  }
  /** The SDK's client, unmodified, on `gpunet mcp` spawned with these flags. */
  const connect = async (flags: string[]) => {
    const sdk = new Client({name: 'gpunet-mcp-e2e', version: '1.0.0'})
    await sdk.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', ...flags],
        env: {...(process.env as Record<string, string>), ...(env as Record<string, string>)},
        cwd: box.dir,
        stderr: 'ignore',
      }),
    )
    return sdk
  }
  const balances = async () => {
    const {document} = await cli(['wallet', 'balance'])
    return JSON.stringify(stable(document))
  }

  before(async function () {
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_RUNTIME: 'host'}
    const started = await runCli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'], {env})
    assert.equal(started.code, 0, started.stderr)
    definition = join(box.dir, 'hello.json')
    const op = {id: 'hello', type: 'container/run', args: {image: 'busybox', cmd: 'echo hello from mcp'}}
    writeFileSync(definition, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
    client = await connect(['--max-spend', '1000000'])
  })
  after(async () => {
    await client?.close()
    await box?.cleanup()
  })

  it('lists every command of the manifest as a tool, or as excluded with its reason on the command', async () => {
    const {tools} = await client.listTools()
    const manifest = JSON.parse(readFileSync(join(BIN, '..', '..', 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, {mcp?: {exclude?: string}; hidden?: boolean}>
    }
    const names = new Set(tools.map((tool) => tool.name))
    for (const [id, command] of Object.entries(manifest.commands)) {
      if (command.hidden) continue
      const tool = id.replaceAll(':', '_')
      if (command.mcp?.exclude) assert.ok(!names.has(tool), `${id} is excluded yet a tool`)
      else assert.ok(names.has(tool), `${id} is neither a tool nor excluded`)
    }
    const post = tools.find((tool) => tool.name === 'job_post')!
    assert.ok(!('network' in (post.inputSchema.properties ?? {})))
    assert.ok('quote' in (post.inputSchema.properties ?? {}))
  })

  it('validates a definition as `job validate --json` does', async () => {
    const result = await call('job_validate', {file: definition})
    assert.equal(result.isError, false)
    assert.deepEqual(result.structuredContent, (await cli(['job', 'validate', definition])).document)
    assert.deepEqual(JSON.parse(result.content[0]!.text!), result.structuredContent)
  })

  it('refuses paying without its quote, with another call’s, with changed arguments, over the cap: nothing paid', async () => {
    const before = await balances()
    const stopQuote = (await call('localnet_stop')).structuredContent!.quote as {id: string}
    const other = await call('job_post', {file: definition, timeout: '60', quote: stopQuote.id})
    assert.equal(other.isError, true)
    assert.equal((other.structuredContent!.error as {code: string}).code, 'quote_other_call')
    const quote = (await call('job_post', {file: definition, timeout: '60'})).structuredContent!.quote as {id: string}
    const changed = await call('job_post', {file: definition, timeout: '120', quote: quote.id})
    assert.equal((changed.structuredContent!.error as {code: string}).code, 'quote_arguments_changed')
    const unknown = await call('job_post', {file: definition, timeout: '60', quote: 'made-up'})
    assert.equal((unknown.structuredContent!.error as {code: string}).code, 'quote_unknown')
    // A session that may spend almost nothing: the post's quote is over its cap.
    const capped = await connect(['--max-spend', '0.000001'])
    try {
      const over = (await capped.callTool({
        name: 'job_post',
        arguments: {file: definition, timeout: '60'},
      })) as ToolResult
      assert.equal(over.isError, true)
      assert.equal((over.structuredContent!.error as {code: string}).code, 'over_cap')
      assert.match((over.structuredContent!.error as {message: string}).message, /0\.000001 it may \(--max-spend\)/)
    } finally {
      await capped.close()
    }
    assert.equal(await balances(), before, 'the wallet paid nothing')
    const jobs = (await call('job_list')).structuredContent as {jobs: unknown[]}
    assert.deepEqual(jobs.jobs, [], 'nothing was posted')
  })

  it('posts a definition through its quote, refuses it twice, and follows it to its result', async () => {
    const asked = await call('job_post', {file: definition, timeout: '60'})
    assert.equal(asked.isError, false)
    const quote = asked.structuredContent!.quote as {id: string; cost: {tokens: number}; from: string}
    const dry = (await cli(['job', 'post', '--file', definition, '--timeout', '60', '--dry-run'])).document as {
      totalPrice: {amount: number}
      wallet: {address: string}
    }
    assert.equal(quote.cost.tokens, dry.totalPrice.amount)
    assert.equal(quote.from, `wallet ${dry.wallet.address}`)

    const posted = await call('job_post', {file: definition, timeout: '60', quote: quote.id})
    assert.equal(posted.isError, false, JSON.stringify(posted.structuredContent))
    const job = posted.structuredContent!.job as string
    assert.match(job, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/)

    const again = await call('job_post', {file: definition, timeout: '60', quote: quote.id})
    assert.equal((again.structuredContent!.error as {code: string}).code, 'duplicate_post')
    const reused = await call('job_post', {file: definition, timeout: '60', quote: quote.id, allowDuplicate: true})
    assert.equal((reused.structuredContent!.error as {code: string}).code, 'quote_used')

    const done = await call('job_get', {job, wait: true, 'wait-timeout': '90'})
    assert.equal(done.isError, false, JSON.stringify(done.structuredContent))
    assert.equal(done.structuredContent!.state, 'COMPLETED')
    const got = await cli(['job', 'get', job])
    assert.deepEqual(stable((await call('job_get', {job})).structuredContent), stable(got.document))

    const logs = await call('job_logs', {job})
    const lines = (logs.structuredContent!.lines as {line: string}[]).map((line) => line.line)
    assert.ok(lines.includes('hello from mcp'), JSON.stringify(logs.structuredContent))
    const cliLogs = await runCli(['job', 'logs', job, '--json'], {env})
    const cliLines = cliLogs.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown)
    assert.deepEqual(stable(logs.structuredContent!.lines), stable(cliLines))
    const bounded = await call('job_logs', {job, maxLines: 1, maxSeconds: 20})
    assert.equal((bounded.structuredContent!.lines as unknown[]).length, 1)
    assert.ok(['maxLines', 'exit'].includes(bounded.structuredContent!.ended as string))

    const read = await client.readResource({uri: `gpunet://jobs/${job}/result`})
    assert.deepEqual(stable(JSON.parse((read.contents[0] as {text: string}).text)), stable(got.document))
    const readLogs = await client.readResource({uri: `gpunet://jobs/${job}/logs`})
    assert.deepEqual(stable(JSON.parse((readLogs.contents[0] as {text: string}).text).lines), stable(cliLines))
  })

  it('runs a one-off command through its quote, its words after -- as given', async () => {
    const args = {command: ['sh', '-c', 'echo "run --via mcp"'], timeout: '60'}
    const quote = (await call('job_run', args)).structuredContent!.quote as {id: string}
    const posted = await call('job_run', {...args, quote: quote.id})
    assert.equal(posted.isError, false, JSON.stringify(posted.structuredContent))
    const job = posted.structuredContent!.job as string
    const done = await call('job_get', {job, wait: true, 'wait-timeout': '90'})
    assert.equal(done.structuredContent!.state, 'COMPLETED', JSON.stringify(done.structuredContent))
    const lines = ((await call('job_logs', {job})).structuredContent!.lines as {line: string}[]).map((l) => l.line)
    assert.ok(lines.includes('run --via mcp'), JSON.stringify(lines))
  })

  it('extends a running job at the price its dry run quotes, then stops it, each through its quote', async () => {
    const args = {command: ['sleep', '60'], timeout: '60'}
    const runQuote = (await call('job_run', args)).structuredContent!.quote as {id: string}
    const job = (await call('job_run', {...args, quote: runQuote.id})).structuredContent!.job as string
    const running = await call('job_get', {job, wait: true, 'wait-for': 'running', 'wait-timeout': '60'})
    assert.equal(running.structuredContent!.state, 'RUNNING', JSON.stringify(running.structuredContent))

    // A following read of a job that goes on ends at its bound, as a result (not an error).
    const started = Date.now()
    const followed = await call('job_logs', {job, maxSeconds: 2})
    assert.equal(followed.isError, false, JSON.stringify(followed.structuredContent))
    assert.equal(followed.structuredContent!.ended, 'maxSeconds')
    assert.ok(Date.now() - started < 15_000)

    const asked = await call('job_extend', {job, timeout: '120'})
    const quote = asked.structuredContent!.quote as {id: string; cost: {tokens: number}}
    const dry = (await cli(['job', 'extend', job, '--timeout', '120', '--dry-run'])).document as {
      totalPrice: {amount: number}
    }
    assert.ok(dry.totalPrice.amount > 0)
    assert.equal(quote.cost.tokens, dry.totalPrice.amount)
    const extended = await call('job_extend', {job, timeout: '120', quote: quote.id})
    assert.equal(extended.isError, false, JSON.stringify(extended.structuredContent))
    assert.equal(extended.structuredContent!.timeout, 120)
    assert.deepEqual(extended.structuredContent!.charged, dry.totalPrice)

    const stopQuote = (await call('job_stop', {job})).structuredContent!.quote as {id: string; cost: unknown}
    assert.deepEqual(stopQuote.cost, {tokens: 0, sol: 0, credits: 0})
    const stopped = await call('job_stop', {job, quote: stopQuote.id})
    assert.equal(stopped.isError, false, JSON.stringify(stopped.structuredContent))
    const after = (await cli(['job', 'get', job])).document as {state: string}
    assert.notEqual(after.state, 'RUNNING')
  })

  it('answers unknown tools and bad arguments with JSON-RPC -32602', async () => {
    await assert.rejects(call('job_nope'), (error: {code?: number}) => error.code === -32602)
    await assert.rejects(call('job_get', {job: '--network=mainnet'}), (error: {code?: number}) => error.code === -32602)
    await assert.rejects(call('job_list', {network: 'mainnet'}), (error: {code?: number}) => error.code === -32602)
  })

  it('serves the schema and the templates as resources', async () => {
    const {resources} = await client.listResources()
    assert.ok(resources.some((resource) => resource.uri === 'gpunet://schema/job-definition'))
    assert.ok(resources.some((resource) => resource.uri === 'gpunet://templates/hello-world'))
    const schema = await client.readResource({uri: 'gpunet://schema/job-definition'})
    assert.deepEqual(JSON.parse((schema.contents[0] as {text: string}).text), (await cli(['job', 'schema'])).document)
  })
})
