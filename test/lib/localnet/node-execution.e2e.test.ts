/**
 * The localnet's node runs the members the network's nodes run (issue 39), end to end on a localnet whose node runs
 * host processes: `restart_policy`, `execution` (groups, `depends_on`, `stop_if_dependent_stops`), continuous health
 * checks (an endpoint's ONLINE/OFFLINE), `global` as the node applies it, `results`, named volumes.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {existsSync} from 'node:fs'
import {createServer as createHttpServer, request as httpRequest} from 'node:http'
import type {AddressInfo} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {Keypair} from '@solana/web3.js'

import type {Follower} from '../../../src/lib/node/api-server/feed.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {postNetwork, result, waitFor} from '../../helpers/node.js'
import {freePort} from '../../helpers/ports.js'

type Json = Record<string, unknown>

const NO_PODMAN = '/nonexistent/podman'

const run = (id: string, args: Json, more: Json = {}) => ({
  id,
  type: 'container/run',
  args: {image: 'unused', ...args},
  ...more,
})
const definition = (ops: unknown[], more: Json = {}) => ({version: '0.1', type: 'container', ...more, ops})

/** When the node read the first line of `op` holding `text` (its log entry's timestamp). */
function lineTime(doc: Awaited<ReturnType<typeof result>>['doc'], op: string, text: string): number {
  const state = doc.raw.opStates.find((o) => o.operationId === op)!
  const entry = state.logs.find((l) => l.log.includes(text))
  assert.ok(entry, `${op} printed ${text}`)
  return Date.parse(entry.timestamp)
}

describe("localnet node: the network's execution members (host processes)", function () {
  this.timeout(60_000)
  /** The localnet log's node lines. */
  const logged: string[] = []
  const t = useLocalnet({
    node: {
      log: (line) => logged.push(line),
      gatewayPort: 0,
      podman: NO_PODMAN,
      hostProcesses: true,
      healthIntervalMs: 100,
      continuousIntervalMs: 200,
    },
  })
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })

  it('restart_policy on-failure with restart_tries 2 runs three times, then fails; each restart in the logs and the state', async () => {
    const policy = {policy: 'on-failure', restart_tries: 2}
    const job = await postNetwork(t, definition([run('flaky', {cmd: 'echo attempt; exit 7', restart_policy: policy})]))
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'failed')
    assert.deepEqual(doc.error, {
      code: 'operation_failed',
      message: 'Operation flaky exited with code 7.',
      op: 'flaky',
      exitCode: 7,
    })
    assert.equal(doc.ops.length, 1)
    assert.equal(doc.ops[0]!.stdout, 'attempt\nattempt\nattempt\n')
    const restarts = doc.raw.opStates[0]!.gpunet.restarts!
    assert.deepEqual(
      restarts.map((r) => r.exitCode),
      [7, 7],
    )
    const said = logged.filter((line) => line.includes(job.toBase58()) && line.includes('restarting'))
    assert.deepEqual(
      said.map((line) => line.replace(/^.*operation /, '')),
      [
        'flaky exited with code 7; restarting it (restart 1 of 2, restart_policy on-failure)',
        'flaky exited with code 7; restarting it (restart 2 of 2, restart_policy on-failure)',
      ],
    )
  })

  it('restart_policy on-failure stops restarting once the command succeeds; `no` never restarts', async () => {
    // Fails on its first run only: the marker file survives in the node's temporary folder of the job.
    const marker = `/tmp/gpunet-restart-${Date.now()}`
    const cmd = `if [ -e ${marker} ]; then echo second; rm ${marker}; exit 0; fi; touch ${marker}; echo first; exit 1`
    const job = await postNetwork(t, definition([run('once', {cmd, restart_policy: 'on-failure'})]))
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.equal(doc.ops[0]!.stdout, 'first\nsecond\n')
    assert.equal(doc.ops[0]!.exitCode, 0)
    assert.deepEqual(doc.raw.opStates[0]!.gpunet.restarts, [
      {exitCode: 1, endTime: doc.raw.opStates[0]!.gpunet.restarts![0]!.endTime},
    ])
    const never = await postNetwork(t, definition([run('no', {cmd: 'echo x; exit 2', restart_policy: 'no'})]))
    await waitFor(t, never, 'COMPLETED')
    const after = (await result(t, never)).doc
    assert.equal(after.ops[0]!.stdout, 'x\n')
    assert.equal(after.raw.opStates[0]!.gpunet.restarts, undefined)
  })

  it('runs the operations of a group side by side, and one that depends_on another once that one is up', async () => {
    const job = await postNetwork(
      t,
      definition([
        run('a', {cmd: 'echo a-start; sleep 1; echo a-end'}, {execution: {group: 'g'}}),
        run('b', {cmd: 'echo b-start; sleep 1; echo b-end'}, {execution: {group: 'g'}}),
        run('c', {cmd: 'echo c-start'}, {execution: {group: 'g', depends_on: ['a']}}),
        run('later', {cmd: 'echo later-start'}),
      ]),
    )
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success', JSON.stringify(doc.error))
    assert.deepEqual(doc.raw.opStates.map((o) => [o.operationId, o.group]).sort(), [
      ['a', 'g'],
      ['b', 'g'],
      ['c', 'g'],
      ['later', 'later'],
    ])
    const aStart = lineTime(doc, 'a', 'a-start')
    const bStart = lineTime(doc, 'b', 'b-start')
    const aEnd = lineTime(doc, 'a', 'a-end')
    const cStart = lineTime(doc, 'c', 'c-start')
    // Side by side: b started before a ended; c waited for a to be up (started), not for it to end.
    assert.ok(bStart < aEnd, `b started ${bStart - aStart} ms after a, a ended ${aEnd - aStart} ms after`)
    assert.ok(cStart >= aStart && cStart < aEnd, `c started ${cStart - aStart} ms after a`)
    // The next group starts once every operation of the one before has ended.
    assert.ok(lineTime(doc, 'later', 'later-start') >= Math.max(aEnd, lineTime(doc, 'b', 'b-end')))
  })

  it('stops an operation with stop_if_dependent_stops when the one it depends on ends; without it, it runs on', async () => {
    const job = await postNetwork(
      t,
      definition([
        run('main', {cmd: 'echo main; sleep 0.5'}, {execution: {group: 'g'}}),
        run(
          'sidecar',
          {cmd: 'echo sidecar; sleep 30'},
          {execution: {group: 'g', depends_on: ['main'], stop_if_dependent_stops: true}},
        ),
        run('other', {cmd: 'sleep 1.5; echo other-done'}, {execution: {group: 'g', depends_on: ['main']}}),
      ]),
    )
    const posted = Date.now()
    await waitFor(t, job, 'COMPLETED')
    assert.ok(Date.now() - posted < 20_000, 'the sidecar did not run its 30 s')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success', JSON.stringify(doc.error))
    const byId = Object.fromEntries(doc.ops.map((o) => [o.id, o]))
    assert.equal(byId.sidecar!.status, 'stopped')
    assert.equal(byId.other!.status, 'success')
    assert.equal(byId.other!.stdout, 'other-done\n')
  })

  it('a failing operation fails the job: the rest of its group is stopped and no later group starts', async () => {
    const job = await postNetwork(
      t,
      definition([
        run('long', {cmd: 'sleep 30'}, {execution: {group: 'g'}}),
        run('bad', {cmd: 'sleep 0.3; exit 4'}, {execution: {group: 'g'}}),
        run('never', {cmd: 'echo never'}),
      ]),
    )
    await waitFor(t, job, 'COMPLETED', 20_000)
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'failed')
    assert.equal(doc.error?.op, 'bad')
    assert.deepEqual(doc.ops.map((o) => [o.id, o.status]).sort(), [
      ['bad', 'failed'],
      ['long', 'stopped'],
    ])
  })

  it('a continuous health check that starts failing turns the endpoint offline, and back online when it passes', async () => {
    const port = await freePort()
    const check = {type: 'http', method: 'GET', path: '/health', expected_status: 200, continuous: true}
    // Healthy for a while, then the health page goes (404), then it comes back.
    const cmd =
      `echo ok > health && /bin/busybox httpd -f -p 127.0.0.1:${port} -h . & ` +
      'sleep 1.5; rm health; sleep 1.5; echo ok > health; sleep 1.5; kill %1'
    const job = await postNetwork(t, definition([run('web', {cmd, expose: [{port, health_checks: [check]}]})]))
    await waitFor(t, job, 'RUNNING')
    const address = job.toBase58()
    const seen: string[] = []
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const endpoints = t.ln.agent!.agent.endpoints(address)
      if (!endpoints) break
      const status = Object.values(endpoints)[0]?.status
      if (status && seen.at(-1) !== status) seen.push(status)
      if (seen.join() === 'OFFLINE,ONLINE,OFFLINE,ONLINE') break
      await sleep(20)
    }
    assert.deepEqual(seen.slice(0, 4), ['OFFLINE', 'ONLINE', 'OFFLINE', 'ONLINE'])
    await waitFor(t, job, 'COMPLETED', 20_000)
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success', JSON.stringify(doc.error))
  })

  it('applies global as the node does, resolves its variables, and extracts results by regex', async () => {
    const job = await postNetwork(
      t,
      definition(
        [
          run(
            'g',
            {
              cmd: 'echo "A=$A B=$B model=%%global.variables.MODEL%% job=%%global.job%%"; echo score=42; echo score=7 >&2',
              env: {B: 'own'},
              work_dir: '',
            },
            {results: {score: 'score=(\\d+)', err: {regex: 'score=\\d+', logType: ['stderr']}}},
          ),
        ],
        {global: {env: {A: 'global', B: 'global'}, variables: {MODEL: 'llama'}}},
      ),
    )
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success', JSON.stringify(doc.error))
    assert.equal(doc.ops[0]!.stdout, `A=global B=own model=llama job=${job.toBase58()}\nscore=42\n`)
    assert.deepEqual(doc.raw.opStates[0]!.results, {score: ['score=42', '42', 'score=7', '7'], err: ['score=7']})
  })

  it('makes a named volume the operations of the job share', async () => {
    const job = await postNetwork(
      t,
      definition([
        {id: 'vol', type: 'container/create-volume', args: {name: 'shared'}},
        run('write', {
          cmd: 'dir=$(echo "$GPUNET_VOLUMES" | sed \'s/.*"\\/data":"\\([^"]*\\)".*/\\1/\'); echo hello > "$dir/f"',
          volumes: [{name: 'shared', dest: '/data'}],
        }),
        run('read', {
          cmd: 'dir=$(echo "$GPUNET_VOLUMES" | sed \'s/.*"\\/data":"\\([^"]*\\)".*/\\1/\'); cat "$dir/f"',
          volumes: [{name: 'shared', dest: '/data'}],
        }),
      ]),
    )
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success', JSON.stringify(doc.error))
    assert.equal(doc.ops.find((o) => o.id === 'read')!.stdout, 'hello\n')
  })

  it('loads several S3 buckets of one resource into its one target', async () => {
    const objects: Record<string, string> = {'/bucket-a/one.txt': 'from a\n', '/bucket-b/two.txt': 'from b\n'}
    const server = createHttpServer((req, res) => {
      const body = objects[req.url ?? '']
      res.writeHead(body === undefined ? 404 : 200).end(body)
    }).listen(0, '127.0.0.1')
    await once(server, 'listening')
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const buckets = [
        {url: `${endpoint}/bucket-a`, files: ['one.txt']},
        {url: `${endpoint}/bucket-b`, files: ['two.txt']},
      ]
      const cmd =
        'dir=$(echo "$GPUNET_RESOURCES" | sed \'s/.*"\\/data":"\\([^"]*\\)".*/\\1/\'); cat "$dir/one.txt" "$dir/two.txt"'
      const job = await postNetwork(
        t,
        definition([run('s3', {cmd, resources: [{type: 'S3', target: '/data', buckets}]})]),
      )
      await waitFor(t, job, 'COMPLETED')
      const {doc} = await result(t, job)
      assert.equal(doc.status, 'success', JSON.stringify(doc.error))
      assert.equal(doc.ops[0]!.stdout, 'from a\nfrom b\n')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  describe('operation control through the node API (poster-signed)', () => {
    const node = () => (t.ln.runtime.node as {address: string}).address
    /** A signed POST at the node's name through the gateway. */
    async function control(
      job: string,
      path: string,
      signer = t.wallet,
      action: 'read' | 'restart' | 'stop' = path.endsWith('/restart') ? 'restart' : 'stop',
    ): Promise<{status: number; body: string}> {
      const port = Number(new URL(t.ln.runtime.gatewayUrl!).port)
      const wallet = walletFromBytes(signer.secretKey, 'poster')
      const authorization = signHeader((m) => wallet.sign(m), {action, node: node(), job})
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/job/${job}${path}`,
            headers: {host: `${node()}.node.localhost:${port}`, authorization},
          },
          (res) => {
            let body = ''
            res.on('data', (chunk: Buffer) => (body += chunk.toString()))
            res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
          },
        )
        req.on('error', reject)
        req.end()
      })
    }

    it('restarts and stops one operation and a whole group; unknown and idle targets are refused, naming them', async () => {
      const job = await postNetwork(
        t,
        definition([
          run('count', {cmd: 'echo run; sleep 30'}, {execution: {group: 'g'}}),
          run('side', {cmd: 'echo side; sleep 30'}, {execution: {group: 'g'}}),
          run('after', {cmd: 'echo after'}),
        ]),
      )
      const address = job.toBase58()
      await waitFor(t, job, 'RUNNING')
      // Both of group g run once their first line is out.
      const feed = () => t.ln.agent!.agent.feeds.get(address)!
      const deadline = Date.now() + 10_000
      while (feed().ops.filter((o) => o.status === 'running').length < 2 && Date.now() < deadline) await sleep(20)
      /** What `opId` wrote so far, as the node API streams it (its history, handed over at once). */
      const linesOf = (opId: string): unknown[] => {
        const seen: unknown[] = []
        const follower: Follower = {
          kind: 'flog',
          matches: (entry) => entry.flog.opId === opId && entry.flog.type === 'container',
          deliver: (entry) => {
            if ('flog' in entry) seen.push(entry.flog.message)
            return true
          },
          drop: () => {},
        }
        feed().follow(follower)
        feed().unfollow(follower)
        return seen
      }
      await eventually(
        'the first lines of group g',
        10_000,
        async () => (linesOf('count').includes('run') && linesOf('side').includes('side') ? true : undefined),
        20,
      )

      assert.deepEqual(await control(address, '/operation/nope/restart'), {
        status: 404,
        body: 'The job has no operation nope.',
      })
      assert.deepEqual(await control(address, '/group/zz/stop'), {status: 404, body: 'The job has no group zz.'})
      assert.deepEqual(await control(address, '/operation/after/stop'), {
        status: 409,
        body: "The job's operation after is not running (group g runs now).",
      })
      assert.deepEqual(await control(address, '/group/h/operation/count/stop'), {
        status: 404,
        body: 'The job has no operation count in group h.',
      })
      const stranger = Keypair.generate()
      assert.equal((await control(address, '/operation/count/restart', stranger)).status, 401)
      // A header the poster signed for reading (or for stopping) opens no restart.
      assert.equal((await control(address, '/operation/count/restart', t.wallet, 'read')).status, 401)
      assert.equal((await control(address, '/operation/count/restart', t.wallet, 'stop')).status, 401)

      const restarted = await control(address, '/operation/count/restart')
      assert.equal(restarted.status, 200, restarted.body)
      assert.deepEqual(JSON.parse(restarted.body), {message: 'Operation restarted', ops: ['count']})
      // The restart is a new run of the same operation: its line comes again.
      const again = Date.now() + 10_000
      while (!logged.some((l) => l.includes(address) && l.includes('starting it again')) && Date.now() < again)
        await sleep(20)
      await eventually(
        'the restarted run’s line',
        10_000,
        async () => (linesOf('count').filter((line) => line === 'run').length >= 2 ? true : undefined),
        20,
      )
      const stopped = await control(address, '/group/g/stop')
      assert.equal(stopped.status, 200, stopped.body)
      assert.deepEqual(JSON.parse(stopped.body).ops, ['count', 'side'])

      await waitFor(t, job, 'COMPLETED', 20_000)
      const {doc} = await result(t, job)
      assert.equal(doc.status, 'success', JSON.stringify(doc.error))
      const byId = Object.fromEntries(doc.ops.map((o) => [o.id, o]))
      assert.equal(byId.count!.stdout, 'run\nrun\n')
      assert.equal(byId.count!.status, 'stopped')
      assert.equal(doc.raw.opStates.find((o) => o.operationId === 'count')!.gpunet.restarts!.length, 1)
      assert.equal(byId.side!.status, 'stopped')
      // Its group stopped as the poster asked, the job goes on with the next group.
      assert.equal(byId.after!.stdout, 'after\n')
      assert.equal((await control(address, '/operation/count/restart')).status, 400, 'an ended job is refused')
    })
  })
})
