/**
 * `gpunet deployment logs` reads every running replica from its node, on a real localnet whose node runs the job as
 * a host process. The job is posted by a vault keypair, as a manager posts a deployment's jobs; the manager here
 * is a recording HTTP server on 127.0.0.1 that answers the network's routes the command uses (the deployment, its
 * jobs, and `/header`, signed with the vault's key), so the test sees exactly which message gpunet asks the vault to
 * sign (the end-to-end test reads the logs through the localnet's own manager).
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'

import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {runCli, runPipeline} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {startServer, type TestServer} from '../../helpers/http.js'

describe('gpunet deployment logs: every replica, prefixed with its job', function () {
  this.timeout(180_000)
  let box: CliSandbox
  let manager: TestServer
  let job: string
  const asked: string[] = []
  const ID = 'Dep1oyment1111111111111111111111111111111111'
  const vault = Keypair.generate()
  const signer = walletFromBytes(vault.secretKey)

  before(async function () {
    this.timeout(150_000)
    box = cliSandbox()
    const started = await box.run(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    writeFileSync(join(box.dir, 'vault.json'), JSON.stringify([...vault.secretKey]))
    const funded = await box.run(['localnet', 'fund', vault.publicKey.toBase58(), '--sol', '1', '--tokens', '10'])
    assert.equal(funded.code, 0, funded.stderr)
    writeFileSync(
      join(box.dir, 'svc.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [
          {
            id: 'svc',
            type: 'container/run',
            args: {image: 'ubuntu', cmd: ['sh', '-c', 'echo replica up; while true; do sleep 1; done']},
          },
        ],
      }),
    )
    const posted = await runCli(
      ['job', 'post', '--file', 'svc.json', '--wallet', 'vault.json', '--wait', '--wait-for', 'running', '--json'],
      {env: box.env, cwd: box.dir},
    )
    assert.equal(posted.code, 0, posted.stderr)
    job = (JSON.parse(posted.stdout) as {job: string}).job
    manager = await startServer((req, res) => {
      const url = new URL(req.url!, 'http://manager')
      const send = (body: unknown) => {
        res.writeHead(200, {'content-type': 'application/json'})
        res.end(JSON.stringify(body))
      }
      if (url.pathname === `/api/deployments/${ID}`) {
        return send({
          id: ID,
          name: 'svc',
          vault: vault.publicKey.toBase58(),
          market: vault.publicKey.toBase58(),
          owner: vault.publicKey.toBase58(),
          status: 'RUNNING',
          replicas: 1,
          timeout: 10,
          strategy: 'SIMPLE',
          created_at: '2026-11-27T10:00:00.000Z',
          updated_at: '2026-11-27T10:00:00.000Z',
        })
      }
      if (url.pathname === `/api/deployments/${ID}/jobs`) {
        return send({jobs: [{job, state: 'RUNNING'}], pagination: {cursor_next: null}})
      }
      if (url.pathname === `/api/deployments/${ID}/events`) {
        // One event, then none: a follower has nothing more to write once it is printed.
        const event = {
          category: 'Deployment',
          type: 'STARTED',
          message: 'started',
          created_at: '2026-11-27T10:00:00.000Z',
        }
        return send({events: [event], pagination: {cursor_next: null}})
      }
      if (url.pathname === `/api/deployments/${ID}/header`) {
        // The network manager's /header: the vault's signature over the message asked, a time part when asked.
        const message = url.searchParams.get('message')!
        asked.push(message)
        const signature = bs58.encode(signer.sign(Buffer.from(message, 'utf8')))
        return send({
          header: `${message}:${signature}${url.searchParams.get('includeTime') === 'true' ? `:${Date.now()}` : ''}`,
        })
      }
      res.writeHead(404).end()
    })
  })
  after(async () => {
    await manager?.close()
    await box?.cleanup()
  })

  it("prints the running replica's lines as [job] line, the vault's headers signed at the manager", async () => {
    const result = await runCli(['deployment', 'logs', ID, '--manager', manager.url], {env: box.env})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, new RegExp(`^\\[${job}\\] replica up$`, 'm'))
    assert.ok(asked.length > 0)
    assert.match(asked[0]!, new RegExp(`^gpunet-node-api action=read node=\\S+ job=${job} at=\\d+$`))
  })

  it('--json prints one {job, op, stream, time, line} object per line', async () => {
    const result = await runCli(['deployment', 'logs', ID, '--manager', manager.url, '--json'], {env: box.env})
    assert.equal(result.code, 0, result.stderr)
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as {job: string; op: string; line: string; time: string})
    const up = lines.find((line) => line.line === 'replica up')
    assert.ok(up, result.stdout)
    assert.equal(up.job, job)
    assert.equal(up.op, 'svc')
    assert.ok(!Number.isNaN(Date.parse(up.time)))
  })

  describe('a follower under `| head -1` returns within 2 s of head (issue 59)', () => {
    // The replica prints one line and the manager has one event: nothing more is written after head left, so
    // gpunet must see the reader go without a write failing.
    for (const [what, args, first] of [
      ['deployment logs --follow', 'logs', () => `[${job}] replica up\n`],
      ['deployment events --follow', 'events', () => /^.*STARTED.*\n$/],
    ] as const) {
      it(what, async () => {
        const piped = await runPipeline(`gpunet deployment ${args} ${ID} --follow --manager ${manager.url} | head -1`, {
          ...box.env,
        })
        assert.equal(piped.code, 0, piped.stderr)
        const expected = first()
        if (typeof expected === 'string') assert.equal(piped.stdout, expected)
        else assert.match(piped.stdout, expected)
        assert.doesNotMatch(piped.stderr, /Error|EPIPE|at /)
        assert.ok(piped.lingeredMs < 2000, `gpunet went on ${piped.lingeredMs} ms after head`)
      })
    }
  })
})
