/**
 * `gpunet deployment`'s checks that come before any request, run as users run the CLI, against a real HTTP server
 * on 127.0.0.1 that records what reaches it: bad replicas, timeouts and definitions create nothing (exit 2 or 3,
 * nothing sent), credentials never go to a plain-http manager elsewhere, a state that refuses the action is exit 2
 * with no question and no change, and without a terminal the undoable commands want --yes.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {runCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {describeAtTerminal, runInTerminal} from '../../helpers/terminal.js'

const ID = 'Dep1oyment1111111111111111111111111111111111'
const deployment = (status: string) => ({
  id: ID,
  name: 'svc',
  vault: Keypair.generate().publicKey.toBase58(),
  market: Keypair.generate().publicKey.toBase58(),
  owner: Keypair.generate().publicKey.toBase58(),
  status,
  replicas: 1,
  timeout: 10,
  strategy: 'SIMPLE',
  endpoints: [],
  active_revision: 1,
  active_jobs: 0,
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
})

describe('deployment commands: checks before any request', () => {
  let dir: string
  let server: TestServer
  let status = 'RUNNING'
  let lastBody: Record<string, unknown> = {}
  let lastAuthorization: string | undefined
  const market = Keypair.generate().publicKey.toBase58()
  const env = () => ({
    GPUNET_WALLET: join(dir, 'wallet.json'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
    GPUNET_MANAGER_URL: server.url,
  })
  const cli = (args: string[]) => runCli(args, {env: env(), cwd: dir})

  before(async () => {
    dir = tempDir('gpunet-deploy-')
    writeFileSync(
      join(dir, 'svc.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'web', type: 'container/run', args: {image: 'ubuntu'}}],
      }),
    )
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({version: '0.1', type: 'container', ops: []}))
    server = await startServer((req, res) => {
      let body = ''
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      req.on('end', () => {
        if (req.method === 'POST' || req.method === 'PATCH') lastBody = JSON.parse(body || '{}')
        lastAuthorization = req.headers.authorization
        res.writeHead(200, {'content-type': 'application/json'})
        const created = req.url === '/api/deployments/create'
        const answer = req.url?.endsWith('/update-replica-count')
          ? {replicas: lastBody.replicas, updated_at: '2026-11-27T10:00:00.000Z'}
          : req.url?.endsWith('/update-market')
            ? // The network's manager's answer: no move_from (it stops the jobs and relists them).
              {market: lastBody.market, updated_at: '2026-11-27T10:00:00.000Z'}
            : req.url?.endsWith('/create-revision')
              ? {active_revision: 2, endpoints: [], revisions: [], updated_at: '2026-11-27T10:00:00.000Z'}
              : req.method === 'GET' || created
                ? deployment(created ? 'DRAFT' : status)
                : {status: 'STOPPING'}
        res.end(JSON.stringify(answer))
      })
    })
  })
  after(async () => {
    await server.close()
    removeDir(dir)
  })
  beforeEach(() => {
    server.seen.length = 0
  })

  const create = (...more: string[]) => ['deployment', 'create', '--file', 'svc.json', '--market', market, ...more]

  for (const replicas of ['0', '101']) {
    it(`--replicas ${replicas} is exit 2, nothing sent`, async () => {
      const result = await cli([...create('--timeout', '10m', '--replicas', replicas), '--json'])
      assert.equal(result.code, 2, result.stderr)
      assert.equal(JSON.parse(result.stdout).error.code, 'invalid_replicas')
      assert.deepEqual(server.seen, [])
    })
  }

  it("--queue-timeout is sent in seconds; a manager that does not keep it (the network's) is warned of", async () => {
    const result = await cli([...create('--timeout', '10m', '--queue-timeout', '5m'), '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(lastBody.queue_timeout, 300)
    const {warnings} = JSON.parse(result.stdout) as {warnings: {code: string}[]}
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['queue_timeout_ignored'],
    )
    assert.match(result.stderr, /did not keep --queue-timeout: this deployment does not move itself/)
  })

  it("deployment move against the network's manager says it relists the running jobs (moving false)", async () => {
    status = 'RUNNING'
    const result = await cli(['deployment', 'move', ID, '--market', market, '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(lastBody, {market})
    const {moved} = JSON.parse(result.stdout) as {moved: {to: string; moving: boolean; how: string}}
    assert.deepEqual([moved.to, moved.moving], [market, false])
    assert.match(moved.how, /stops the running jobs and relists them/)
  })

  it('a --timeout that is no whole number of minutes is exit 2, nothing sent', async () => {
    const result = await cli(create('--timeout', '90s'))
    assert.equal(result.code, 2)
    assert.match(result.stderr, /--timeout "90s" is not a whole number of minutes/)
    assert.deepEqual(server.seen, [])
  })

  it('an invalid definition is exit 3 with its errors, nothing sent', async () => {
    const result = await runCli(
      ['deployment', 'create', '--file', 'bad.json', '--market', market, '--timeout', '10m', '--json'],
      {
        env: env(),
        cwd: dir,
      },
    )
    assert.equal(result.code, 3, result.stderr)
    const error = JSON.parse(result.stdout).error
    assert.equal(error.file, 'bad.json')
    assert.ok(error.errors.length > 0)
    assert.deepEqual(server.seen, [])
  })

  it('--time-scale off the localnet is exit 2, nothing sent', async () => {
    const result = await cli([...create('--timeout', '10m', '--time-scale', '10'), '--network', 'devnet'])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /--time-scale is for the localnet only/)
    assert.deepEqual(server.seen, [])
  })

  it('a --schedule that is no 5-field cron is exit 3 with why, nothing sent; a good one is sent as it is', async () => {
    for (const [schedule, why] of [
      ['* * * * * *', /exactly 5 parts/],
      ['61 * * * *', /Invalid value for minute/],
      ['0 0 31 2 *', /never fires/],
    ] as const) {
      const result = await cli([
        ...create('--timeout', '1h', '--strategy', 'SCHEDULED', '--schedule', schedule),
        '--json',
      ])
      assert.equal(result.code, 3, result.stderr)
      const error = JSON.parse(result.stdout).error as {code: string; message: string}
      assert.equal(error.code, 'invalid_schedule')
      assert.match(error.message, why)
    }
    const missing = await cli(create('--timeout', '1h', '--strategy', 'SCHEDULED'))
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /--strategy SCHEDULED needs --schedule/)
    assert.deepEqual(server.seen, [])
    const sent = await cli(create('--timeout', '1h', '--strategy', 'SCHEDULED', '--schedule', '*/15 * * * *'))
    assert.equal(sent.code, 0, sent.stderr)
    assert.equal(lastBody.strategy, 'SCHEDULED')
    assert.equal(lastBody.schedule, '*/15 * * * *')
  })

  it("INFINITE: a timeout under 60 minutes, a rotation too close to it, or another strategy's member is exit 2, nothing sent", async () => {
    const refused = async (args: string[], why: RegExp) => {
      const result = await cli(create(...args))
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, why)
    }
    await refused(['--timeout', '30m', '--strategy', 'INFINITE'], /needs a --timeout of at least 60 minutes/)
    await refused(['--timeout', '1h', '--strategy', 'INFINITE', '--rotation-time', '51m'], /at least 10 minutes less/)
    await refused(['--timeout', '1h', '--strategy', 'INFINITE', '--startup-timeout', '90s'], /whole minutes/)
    await refused(['--timeout', '1h', '--rotation-time', '20m'], /--rotation-time is for --strategy INFINITE only/)
    assert.deepEqual(server.seen, [])
    const sent = await cli(
      create('--timeout', '2h', '--strategy', 'INFINITE', '--rotation-time', '15m', '--startup-timeout', '10m'),
    )
    assert.equal(sent.code, 0, sent.stderr)
    assert.deepEqual([lastBody.strategy, lastBody.rotation_time, lastBody.startup_timeout], ['INFINITE', 900, 10])
  })

  it('takes the manager from the config file when no flag or environment variable names it', async () => {
    const set = await runCli(['config', 'set', 'manager', server.url, '--network', 'localnet'], {env: env()})
    assert.equal(set.code, 0, set.stderr)
    const withoutEnv: NodeJS.ProcessEnv = {...env()}
    delete withoutEnv.GPUNET_MANAGER_URL
    status = 'RUNNING'
    const result = await runCli(['deployment', 'get', ID, '--json'], {env: withoutEnv})
    assert.equal(result.code, 0, result.stderr)
    assert.equal((JSON.parse(result.stdout) as {manager: string}).manager, server.url)
    // The deployment, then the others on its vault (shared_with), then its autoscaling (a manager not the network's).
    assert.equal(server.seen[0], `GET /api/deployments/${ID}`)
    assert.match(server.seen[1] ?? '', /^GET \/api\/deployments\?(.*&)?vault=/)
    assert.equal(server.seen[2], `GET /api/deployments/${ID}/autoscale`)
    assert.equal(server.seen.length, 3)
  })

  it('sends the wallet headers, or the managerApiKey setting (read from stdin, never printed) as a Bearer key', async () => {
    status = 'RUNNING'
    assert.equal((await cli(['deployment', 'get', ID])).code, 0)
    assert.match(lastAuthorization ?? '', /^NosanaApiAuthentication:[1-9A-HJ-NP-Za-km-z]+:\d+$/)
    const set = await runCli(['config', 'set', 'managerApiKey', '--network', 'localnet'], {
      env: env(),
      stdin: 'gpn_test-key',
    })
    assert.equal(set.code, 0, set.stderr)
    assert.ok(!set.stdout.includes('gpn_test-key') && !set.stderr.includes('gpn_test-key'))
    assert.equal((await cli(['deployment', 'get', ID])).code, 0)
    assert.equal(lastAuthorization, 'Bearer gpn_test-key')
    assert.equal((await runCli(['config', 'get', 'managerApiKey', '--network', 'localnet'], {env: env()})).code, 2)
    assert.equal((await runCli(['config', 'unset', 'managerApiKey', '--network', 'localnet'], {env: env()})).code, 0)
  })

  it('a plain-http manager on another host gets no credentials (exit 2)', async () => {
    const result = await cli(['deployment', 'list', '--manager', 'http://manager.example.org'])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /must be https/)
  })

  it('sends a valid create to the manager with the definition in the network’s form', async () => {
    const result = await cli([...create('--timeout', '1h30m', '--replicas', '3', '--strategy', 'SIMPLE'), '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(server.seen, ['POST /api/deployments/create'])
    const printed = JSON.parse(result.stdout)
    assert.equal(printed.manager, server.url)
    assert.equal(printed.network, 'localnet')
    assert.equal(printed.status, 'DRAFT')
    assert.equal(printed.active_revision, 1)
    const {job_definition: definition, ...rest} = lastBody as {job_definition: {ops: {id: string}[]}}
    assert.deepEqual(rest, {name: 'svc', market, replicas: 3, timeout: 90, strategy: 'SIMPLE'})
    assert.equal(definition.ops[0]!.id, 'web')
  })

  it('--vault new sends new_vault, --vault ADDRESS sends vault, neither sends none (the shared vault)', async () => {
    const vault = Keypair.generate().publicKey.toBase58()
    for (const [flags, member] of [
      [['--vault', 'new'], {new_vault: true}],
      [['--vault', vault], {vault}],
    ] as const) {
      const result = await cli([...create('--timeout', '10m', ...flags), '--json'])
      assert.equal(result.code, 0, result.stderr)
      const rest = {...(lastBody as Record<string, unknown>)}
      delete rest.job_definition
      assert.deepEqual(rest, {name: 'svc', market, replicas: 1, timeout: 10, strategy: 'SIMPLE-EXTEND', ...member})
    }
  })

  it('a --vault that is neither new nor an address is exit 2, nothing sent', async () => {
    const result = await cli([...create('--timeout', '10m', '--vault', 'mine'), '--json'])
    assert.equal(result.code, 2, result.stderr)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; message: string; hint: string}}
    assert.equal(error.code, 'invalid_vault')
    assert.match(error.message, /--vault "mine" is neither "new" nor a vault's address/)
    assert.match(error.hint, /leave --vault out for your shared vault/)
    assert.deepEqual(server.seen, [])
  })

  it('withdraw --sol or --tokens that is no amount is exit 2, nothing sent', async () => {
    for (const flags of [
      ['--sol', 'all'],
      ['--tokens', '-1'],
      ['--tokens', '0.0000001'],
    ]) {
      const result = await cli(['deployment', 'withdraw', ID, ...flags, '--yes', '--json'])
      assert.equal(result.code, 2, `${flags.join(' ')}: ${result.stderr}`)
      assert.equal(JSON.parse(result.stdout).error.code, 'invalid_amount')
      assert.deepEqual(server.seen, [])
    }
  })

  for (const replicas of ['-1', '101', '1.5', 'two', '']) {
    it(`scale to ${JSON.stringify(replicas)} is exit 2, nothing sent`, async () => {
      const result = await cli(['deployment', 'scale', ID, replicas, '--json'])
      assert.equal(result.code, 2, result.stderr)
      const {error} = JSON.parse(result.stdout)
      assert.equal(error.code, 'invalid_replicas', result.stdout)
      assert.match(error.message, /not a whole number from 0 to 100/)
      assert.deepEqual(server.seen, [])
    })
  }

  it('scale to 0 sends {replicas: 0} and says what 0 means, in its output and its --json', async () => {
    status = 'RUNNING'
    const result = await cli(['deployment', 'scale', ID, '0'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(lastBody, {replicas: 0})
    assert.match(result.stdout, /keeps running with no job; nothing is listed, extended or spent/)
    const json = await cli(['deployment', 'scale', ID, '0', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const {scaled} = JSON.parse(json.stdout)
    assert.equal(scaled.from, 1)
    assert.match(scaled.meaning, /no job/)
  })

  it("scale sends the network's update-replica-count", async () => {
    status = 'RUNNING'
    const result = await cli(['deployment', 'scale', ID, '3'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(server.seen, [
      `GET /api/deployments/${ID}`,
      `PATCH /api/deployments/${ID}/update-replica-count`,
      `GET /api/deployments/${ID}`,
    ])
    assert.deepEqual(lastBody, {replicas: 3})
  })

  it('revise with an invalid definition is exit 3 with its errors, nothing sent', async () => {
    const result = await cli(['deployment', 'revise', ID, '--file', 'bad.json', '--json'])
    assert.equal(result.code, 3, result.stderr)
    assert.equal(JSON.parse(result.stdout).error.file, 'bad.json')
    assert.deepEqual(server.seen, [])
  })

  it("revise sends the definition in the network's form as create-revision's body, as @nosana/api does", async () => {
    status = 'RUNNING'
    const result = await cli(['deployment', 'revise', ID, '--file', 'svc.json'])
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(server.seen, [`POST /api/deployments/${ID}/create-revision`, `GET /api/deployments/${ID}`])
    assert.equal((lastBody as {ops: {id: string}[]}).ops[0]!.id, 'web')
    assert.match(result.stdout, /Revision 2 of deployment \S+ is rolling out, one replica at a time/)
  })

  const refusals: [string, string, string][] = [
    ['STOPPED', 'stop', 'deployment_not_running'],
    ['DRAFT', 'stop', 'deployment_not_running'],
    ['RUNNING', 'delete', 'deployment_running'],
  ]
  for (const [state, command, code] of refusals) {
    it(`${command} of a ${state} deployment is exit 2 (${code}), only read`, async () => {
      status = state
      const result = await cli(['deployment', command, ID, '--yes', '--json'])
      assert.equal(result.code, 2, result.stderr)
      const error = JSON.parse(result.stdout).error
      assert.equal(error.code, code)
      assert.equal(error.status, state)
      assert.deepEqual(server.seen, [`GET /api/deployments/${ID}`])
    })
  }

  describeAtTerminal('at a terminal', () => {
    it('stop asks first: "n" changes nothing (exit 130), "y" stops it', async () => {
      status = 'RUNNING'
      const kept = await runInTerminal(['deployment', 'stop', ID], env(), '[y/N]', 'n\r')
      assert.equal(kept.code, 130, kept.output)
      assert.match(kept.output, /Stop deployment \S+ and every job it runs\? \[y\/N\]/)
      assert.match(kept.output, /Cancelled: nothing was changed\./)
      assert.deepEqual(server.seen, [`GET /api/deployments/${ID}`])
      server.seen.length = 0
      const stopped = await runInTerminal(['deployment', 'stop', ID], env(), '[y/N]', 'y\r')
      assert.equal(stopped.code, 0, stopped.output)
      assert.ok(server.seen.includes(`POST /api/deployments/${ID}/stop`), server.seen.join(', '))
    })
  })

  it('stop without a terminal and without --yes refuses (exit 2), nothing changed', async () => {
    status = 'RUNNING'
    const result = await cli(['deployment', 'stop', ID])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /refusing to stop deployment .* without a terminal/)
    assert.deepEqual(server.seen, [`GET /api/deployments/${ID}`])
  })
})
