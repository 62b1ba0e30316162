import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {isAlive} from '../../../src/lib/process/alive.js'
import {runCli} from '../../helpers/cli.js'
import {describeAtTerminal, runInTerminal} from '../../helpers/terminal.js'
import {type CliSandbox, cliSandbox, spawnForegroundLocalnet} from '../../helpers/cli-localnet.js'

describe('gpunet localnet start / status / stop / reset', function () {
  this.timeout(60_000)
  let box: CliSandbox

  beforeEach(() => {
    box = cliSandbox()
  })
  afterEach(async () => {
    await box.cleanup()
  })

  it('status of a localnet that is not running: exit 7, human and --json', async () => {
    const human = await box.run(['localnet', 'status'])
    assert.equal(human.code, 7)
    assert.match(human.stdout, /No localnet is running for .*localnet\./)
    assert.match(human.stdout, /gpunet localnet start --detach/)
    const json = await box.run(['localnet', 'status', '--json'])
    assert.equal(json.code, 7)
    const status = JSON.parse(json.stdout) as LocalnetStatus
    assert.equal(status.running, false)
    assert.equal(status.rpcUrl, null)
    assert.equal(status.dataDir, box.dataDir)
  })

  it('start --detach, status, a second start, stop: one document per --json, state kept', async () => {
    const started = await box.run(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as LocalnetStatus
    assert.equal(status.running, true)
    assert.match(status.rpcUrl!, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(status.wsUrl, `ws://127.0.0.1:${Number(new URL(status.rpcUrl!).port) + 1}`)
    assert.match(status.secretsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.match(status.deploymentManager ?? '', /^http:\/\/127\.0\.0\.1:\d+$/)
    // The manager's database and the key sealing its vaults, beside the secrets service's, its owner's only.
    assert.equal(statSync(join(box.dataDir, 'deployments', 'vaults.key')).mode & 0o777, 0o600)
    assert.equal(statSync(join(box.dataDir, 'deployments', 'deployments.db')).mode & 0o777, 0o600)
    assert.equal(status.programId, 'nosJhNRqr2bc9g1nfGDcXXTXvYUmxD4cVwy2pMWhrYM')
    assert.ok(status.market && status.mint)
    // the first start created the wallet it funded, readable by its owner only
    assert.equal(statSync(box.env.GPUNET_WALLET!).mode & 0o777, 0o600)
    assert.equal(statSync(join(box.dataDir, 'faucet.json')).mode & 0o777, 0o600)

    const health = await fetch(status.rpcUrl!, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}',
    })
    assert.deepEqual(await health.json(), {jsonrpc: '2.0', result: 'ok', id: 1})

    const human = await box.run(['localnet', 'status'])
    assert.equal(human.code, 0)
    assert.match(human.stdout, new RegExp(`RPC +${status.rpcUrl}`))
    assert.match(human.stdout, new RegExp(`Token mint +${status.mint}`))
    assert.match(human.stdout, new RegExp(`Deployments +${status.deploymentManager}`))
    // The node agent is on by default: running with its gateway, or off saying why (no podman here).
    const node = status.node
    assert.ok(node, 'the status has the node')
    if ('address' in node) {
      assert.match(status.gatewayUrl ?? '', /^http:\/\/node\.localhost:\d+$/)
      // https beside http, on the next port (it follows the gateway's), signed by the localnet's own authority.
      const gatewayPort = Number(new URL(status.gatewayUrl!).port)
      assert.match(status.gatewayHttpsUrl ?? '', /^https:\/\/node\.localhost:\d+$/)
      assert.equal(status.caCertificate, join(box.dataDir, 'tls', 'ca.pem'))
      assert.equal(statSync(join(box.dataDir, 'tls', 'ca-key.pem')).mode & 0o777, 0o600)
      const httpsPort = new URL(status.gatewayHttpsUrl!).port
      assert.deepEqual(status.frpServerAddress, {
        http: `node.localhost:${gatewayPort}`,
        https: `node.localhost:${httpsPort}`,
      })
      assert.match(human.stdout, new RegExp(`TLS gateway +https://<job>\\.node\\.localhost:${httpsPort}/`))
      assert.match(human.stdout, new RegExp(`CA +${status.caCertificate} \\(NODE_EXTRA_CA_CERTS`))
      assert.match(
        human.stdout,
        new RegExp(`FRP address +node\\.localhost:${gatewayPort}, node\\.localhost:${httpsPort} \\(https\\)`),
      )
      assert.match(
        human.stdout,
        new RegExp(`Node +${node.address} \\(podman, chosen by --runtime auto; \\d+ GPUs?, idle\\)`),
      )
      assert.equal(statSync(join(box.dataDir, 'node.json')).mode & 0o777, 0o600)
    } else {
      assert.equal(status.gatewayUrl, null)
      assert.deepEqual([status.gatewayHttpsUrl, status.caCertificate, status.frpServerAddress], [null, null, null])
      assert.match(human.stdout, /Node +off: /)
    }

    const again = await box.run(['localnet', 'start', '--detach'])
    assert.equal(again.code, 0)
    assert.match(again.stderr, /A localnet already serves/)
    assert.match(again.stdout, new RegExp(`pid ${status.pid}`))
    // The flags it runs with, given again, change nothing: exit 0.
    const same = await box.run(['localnet', 'start', '--detach', '--pull', 'missing'])
    assert.equal(same.code, 0, same.stderr)
    // One it does not run with is refused, not dropped (issue 59: `--pull never` exited 0 and pulled all the same).
    const other = await box.run(['localnet', 'start', '--detach', '--pull', 'never'])
    assert.equal(other.code, 2, other.stderr)
    assert.equal(other.stdout, '')
    assert.match(
      other.stderr,
      new RegExp(
        `Error: a localnet \\(pid ${status.pid}\\) already serves .* --pull never \\(it runs with --pull missing\\)`,
      ),
    )
    assert.match(
      other.stderr,
      /Hint: stop it first \(`gpunet localnet stop`; its chain is kept\), then start it again with --pull never/,
    )
    const otherJson = await runCli(['localnet', 'start', '--detach', '--no-node', '--json'], {env: box.env})
    assert.equal(otherJson.code, 2)
    const {error} = JSON.parse(otherJson.stdout) as {error: {code: string; differences: unknown[]}}
    assert.equal(error.code, 'localnet_running_otherwise')
    assert.deepEqual(error.differences, [{flag: 'node', running: '--node', given: '--no-node'}])

    const caBefore = status.caCertificate && readFileSync(status.caCertificate, 'utf8')
    const stopped = await box.run(['localnet', 'stop', '--json'])
    assert.deepEqual(JSON.parse(stopped.stdout), {stopped: true, pid: status.pid, dataDir: box.dataDir, endedJobs: []})
    assert.equal(isAlive(status.pid!), false)
    const stopAgain = await box.run(['localnet', 'stop'])
    assert.equal(stopAgain.code, 0)
    assert.match(stopAgain.stdout, /No localnet is running/)

    const restarted = JSON.parse((await box.run(['localnet', 'start', '--detach', '--json'])).stdout) as LocalnetStatus
    assert.equal(restarted.market, status.market, 'a restart keeps the chain')
    if (status.caCertificate) {
      // The same authority: a client that trusts it once goes on trusting the localnet.
      assert.equal(restarted.caCertificate, status.caCertificate)
      assert.equal(readFileSync(restarted.caCertificate!, 'utf8'), caBefore)
      assert.equal(statSync(join(box.dataDir, 'tls', 'ca-key.pem')).mode & 0o777, 0o600)
    }
  })

  it('stop says which running jobs it ends, on stderr and as endedJobs (issue 59)', async () => {
    const started = await box.run(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const file = join(box.dir, 'sleepy.json')
    const op = {id: 'nap', type: 'container/run', args: {image: 'ubuntu', cmd: ['sh', '-c', 'sleep 60']}}
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
    const posted = await box.run(['job', 'post', '--file', file, '--wait', '--wait-for', 'running', '--json'])
    assert.equal(posted.code, 0, posted.stderr)
    const {job} = JSON.parse(posted.stdout) as {job: string}
    const stopped = await box.run(['localnet', 'stop', '--json'])
    assert.equal(stopped.code, 0, stopped.stderr)
    assert.deepEqual((JSON.parse(stopped.stdout) as {endedJobs: string[]}).endedJobs, [job])
    assert.match(stopped.stderr, new RegExp(`Ending 1 running job with the localnet \\(${job}\\): at its next start`))
  })

  it('start in the foreground prints one --json document when ready and saves the chain on Ctrl+C', async () => {
    const {child, status} = await spawnForegroundLocalnet(box.dataDir, box.env)
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    assert.equal(status.running, true)
    assert.equal(status.pid, child.pid)
    child.kill('SIGINT')
    const [code] = (await once(child, 'exit')) as [number]
    assert.equal(code, 0)
    assert.match(stderr, /Localnet stopped\./)
    assert.equal(existsSync(join(box.dataDir, 'localnet.json')), false)
    assert.equal(existsSync(join(box.dataDir, 'chain', 'chain.bin')), true)
  })

  it('start refuses a data directory another live process holds (exit 1), and takes over a stale lock', async () => {
    mkdirSync(box.dataDir, {recursive: true})
    // this test's own pid: a live process holds the lock
    writeFileSync(join(box.dataDir, 'lock'), String(process.pid))
    const refused = await box.run(['localnet', 'start'])
    assert.equal(refused.code, 1)
    assert.equal(
      refused.stderr,
      `Error: a localnet (pid ${process.pid}) already uses ${box.dataDir}\nHint: Stop it with "gpunet localnet stop", or use another --data-dir.\n`,
    )
    // a pid that cannot be alive: the lock is stale
    writeFileSync(join(box.dataDir, 'lock'), '999999999')
    const started = await box.run(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    assert.equal((JSON.parse(started.stdout) as LocalnetStatus).running, true)
  })

  it('reset wipes the chain and restarts a running localnet fresh', async () => {
    const first = JSON.parse((await box.run(['localnet', 'start', '--detach', '--json'])).stdout) as LocalnetStatus
    const refused = await box.run(['localnet', 'reset', '--json'])
    assert.equal(refused.code, 2, 'no terminal to ask and no --yes')
    const {error} = JSON.parse(refused.stdout) as {error: {code: string; message: string; hint: string}}
    assert.equal(error.code, 'confirmation_required')
    assert.equal(error.message, `refusing to wipe the localnet in ${box.dataDir} without a terminal to confirm`)
    assert.equal(error.hint, 'pass --yes to wipe it from a script')
    const kept = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
    assert.equal(kept.market, first.market, 'nothing wiped')
    assert.equal(kept.pid, first.pid, 'nothing restarted')

    const reset = await box.run(['localnet', 'reset', '--yes', '--json'])
    assert.equal(reset.code, 0, reset.stderr)
    const result = JSON.parse(reset.stdout) as {reset: boolean; restarted: boolean; rpcUrl: string}
    assert.equal(result.reset, true)
    assert.equal(result.restarted, true)
    const fresh = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
    assert.equal(fresh.running, true)
    assert.notEqual(fresh.market, first.market)
    assert.notEqual(fresh.pid, first.pid)
  })

  it('reset starts the localnet again with the node flags it was started with, and says them', async () => {
    const flags = ['--gpus', '2', '--runtime', 'host', '--gateway-port', '0', '--pull', 'never']
    const first = await box.run(['localnet', 'start', '--detach', ...flags, '--json'])
    assert.equal(first.code, 0, first.stderr)
    const node = (stdout: string) =>
      (JSON.parse(stdout) as {node: {gpus: number; runtime: string; runtimeChoice: string}}).node
    assert.deepEqual(node(first.stdout), {
      ...node(first.stdout),
      gpus: 2,
      runtime: 'host-process',
      runtimeChoice: 'host',
    })
    const reset = await box.run(['localnet', 'reset', '--yes', '--json'])
    assert.equal(reset.code, 0, reset.stderr)
    const {startArgs} = JSON.parse(reset.stdout) as {startArgs: string[]}
    // The fresh chain keeps the ids of the one wiped (its own here).
    assert.deepEqual(startArgs, [
      '--runtime',
      'host',
      '--gateway-port',
      '0',
      '--pull',
      'never',
      '--gpus',
      '2',
      '--ids',
      'own',
    ])
    const fresh = node((await box.run(['localnet', 'status', '--json'])).stdout)
    assert.deepEqual(
      [fresh.gpus, fresh.runtime, fresh.runtimeChoice],
      [2, 'host-process', 'host'],
      'issue 25: --gpus 2 came back as 0 GPUs, host processes as off',
    )
    const human = await box.run(['localnet', 'reset', '--yes'])
    assert.match(
      human.stdout,
      /^Started a fresh localnet at http:\S+ with --runtime host --gateway-port 0 --pull never --gpus 2 --ids own\.$/m,
    )
  })

  it("--ids: a new chain gets a network's jobs program and mint; an existing one keeps its own; reset keeps or changes them", async () => {
    const status = async () =>
      JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as {
        ids: string
        programId: string
        mint: string
      }
    await box.run(['localnet', 'stop'])
    const wiped = await box.run(['localnet', 'reset', '--yes'])
    assert.equal(wiped.code, 0, wiped.stderr)
    const started = await box.run(['localnet', 'start', '--detach', '--no-node', '--ids', 'devnet'])
    assert.equal(started.code, 0, started.stderr)
    assert.match(started.stdout, /^ {2}Ids +devnet's jobs program and token mint$/m)
    assert.deepEqual(await status(), {
      ...(await status()),
      ids: 'devnet',
      programId: 'nosJTmGQxvwXy23vng5UjkTbfv91Bzf9jEuro78dAGR',
      mint: 'devr1BGQndEW5k5zfvG5FsLyZv1Ap73vNgAHcQ9sUVP',
    })
    // The faucet mints the network's token on this chain: the default wallet holds it.
    const balance = JSON.parse((await box.run(['wallet', 'balance', '--json'])).stdout) as {tokens: {amount: number}}
    assert.equal(balance.tokens.amount, 1000)
    const again = await box.run(['localnet', 'start', '--detach', '--ids', 'mainnet'])
    assert.match(
      again.stderr,
      /this chain was created with devnet ids and keeps them; .*`gpunet localnet reset --ids mainnet`/,
    )
    assert.equal((await status()).ids, 'devnet')
    assert.equal((await box.run(['localnet', 'reset', '--yes'])).code, 0)
    assert.equal((await status()).ids, 'devnet', 'reset keeps the ids of the chain it wiped')
    assert.equal((await box.run(['localnet', 'reset', '--yes', '--ids', 'mainnet'])).code, 0)
    assert.deepEqual(
      [(await status()).ids, (await status()).mint],
      ['mainnet', 'nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7'],
    )
    const bad = await runCli(['localnet', 'start', '--detach'], {env: {...box.env, GPUNET_LOCALNET_IDS: 'testnet'}})
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /localnetIds must be one of own, devnet, mainnet, not "testnet"/)
    const set = await box.run(['config', 'set', 'localnetIds', 'testnet', '--network', 'localnet'])
    assert.equal(set.code, 2)
    assert.match(set.stderr, /localnetIds must be one of own, devnet, mainnet/)
    await box.run(['localnet', 'stop'])
  })

  it('the gateway port follows GPUNET_LOCALNET_PORT (+81) unless given; a busy one is one error naming both settings', async () => {
    const port = await freePortWith(1, 81)
    const env = {...box.env, GPUNET_LOCALNET_PORT: String(port)}
    delete (env as Record<string, string | undefined>).GPUNET_GATEWAY_PORT
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(port + 81, '127.0.0.1', resolve))
    try {
      const busy = await runCli(['localnet', 'start', '--detach', '--json'], {env})
      assert.equal(busy.code, 5, busy.stderr)
      assert.deepEqual(JSON.parse(busy.stdout), {
        error: {
          code: 'gateway_port_in_use',
          message: `gateway port ${port + 81} is in use on 127.0.0.1`,
          hint:
            'Another program holds it: choose another with `--gateway-port N` or GPUNET_GATEWAY_PORT=N (0 picks a free ' +
            'one), or turn the node off with --no-node.',
          port: port + 81,
        },
      })
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
    const started = await runCli(['localnet', 'start', '--detach', '--json'], {env})
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as LocalnetStatus
    assert.equal(status.rpcUrl, `http://127.0.0.1:${port}`)
    assert.equal(new URL(status.gatewayUrl!).port, String(port + 81))
  })

  it('reset of a directory without a localnet says so', async () => {
    const refused = await box.run(['localnet', 'reset'])
    assert.equal(refused.code, 2)
    assert.match(
      refused.stderr,
      /^Error: refusing to wipe the localnet in .* without a terminal to confirm\nHint: pass --yes/,
    )
    const reset = await box.run(['localnet', 'reset', '-y'])
    assert.equal(reset.code, 0)
    assert.match(reset.stdout, /There was no localnet in /)
    assert.equal(existsSync(box.dataDir), false)
  })

  it('start on a port in use fails with exit 5 and a hint', async () => {
    const {createServer} = await import('node:net')
    const blocker = createServer().listen(0, '127.0.0.1')
    await new Promise((r) => blocker.once('listening', r))
    const port = (blocker.address() as {port: number}).port
    try {
      const hint =
        'Hint: Another program holds it: start the localnet on other ports with `gpunet localnet start --port N`, or set ' +
        'GPUNET_LOCALNET_PORT=N for every command (the WebSocket endpoint takes N+1; 0 picks any free pair).\n'
      const detached = await box.run(['localnet', 'start', '--detach', '--port', String(port)])
      assert.equal(detached.code, 5)
      assert.equal(detached.stderr, `Error: port ${port} or ${port + 1} is in use on 127.0.0.1\n${hint}`)
      assert.equal(detached.stdout, '')
      const foreground = await box.run(['localnet', 'start', '--port', String(port), '--json'])
      assert.equal(foreground.code, 5)
      const {error} = JSON.parse(foreground.stdout) as {error: {code: string; message: string; port: number}}
      assert.equal(error.code, 'port_in_use')
      assert.equal(error.message, `port ${port} or ${port + 1} is in use on 127.0.0.1`)
      assert.equal(error.port, port)
      // A command that starts the localnet on demand says the same, naming the variable it read the port from.
      const env = {...box.env, GPUNET_LOCALNET_PORT: String(port)}
      const job = join(box.dir, 'busy-port-job.json')
      writeFileSync(
        job,
        JSON.stringify({
          version: '0.1',
          type: 'container',
          ops: [{id: 'a', type: 'container/run', args: {image: 'x'}}],
        }),
      )
      const post = await runCli(['job', 'post', '--file', job], {env})
      assert.equal(post.code, 5)
      assert.equal(post.stderr, `Error: port ${port} or ${port + 1} is in use on 127.0.0.1\n${hint}`)
      const secrets = await runCli(['secrets', 'get', '--json'], {env})
      assert.equal(secrets.code, 5)
      assert.equal(JSON.parse(secrets.stdout).error.code, 'port_in_use')
    } finally {
      blocker.close()
    }
  })
})

describeAtTerminal('gpunet localnet reset at a terminal', function () {
  this.timeout(30_000)
  let box: CliSandbox
  before(() => {
    box = cliSandbox()
  })
  after(() => box.cleanup())

  it('asks first: "n", Ctrl+C and Ctrl+D keep everything (exit 130), "y" wipes', async () => {
    mkdirSync(box.dataDir, {recursive: true})
    writeFileSync(join(box.dataDir, 'genesis.json'), '{}')
    const question = `Wipe the localnet in ${box.dataDir} (chain, content store, faucet, secrets)? [y/N]`
    for (const keys of ['n\r', '\x03', '\x04']) {
      const kept = await runInTerminal(['localnet', 'reset'], box.env, '[y/N]', keys)
      assert.equal(kept.code, 130, JSON.stringify(kept.output))
      assert.ok(kept.output.includes(question), kept.output)
      assert.match(kept.output, /Cancelled(: nothing was wiped)?\./)
      assert.equal(existsSync(join(box.dataDir, 'genesis.json')), true)
    }
    const wiped = await runInTerminal(['localnet', 'reset'], box.env, '[y/N]', 'y\r')
    assert.equal(wiped.code, 0, wiped.output)
    assert.match(wiped.output, /Wiped the localnet in /)
    assert.equal(existsSync(join(box.dataDir, 'genesis.json')), false)
  })
})

/** A port P free with P + each offset free too (the RPC pair and the gateway), from a range clear of the defaults. */
async function freePortWith(...offsets: number[]): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const probe = createServer()
      probe.once('error', () => resolve(false))
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
    })
  for (;;) {
    // Below Linux's ephemeral range (32768 up): another test's listen(0) or outgoing connection cannot take a port
    // of the set between this probe and the localnet's start (the CI saw exit 5 from that race).
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if ((await free(port)) && (await Promise.all(offsets.map((o) => free(port + o)))).every(Boolean)) return port
  }
}
