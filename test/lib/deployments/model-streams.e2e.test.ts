/**
 * Issue 58: streamed completions from the real model server (examples/model-server, llama.cpp on a tiny random
 * model) behind a deployment of two replicas on the localnet (podman, 4 nodes), read by the official `ollama` and
 * `openai` clients, unmodified, given the deployment's stable URL and a fetch that resolves `*.localhost` to the
 * loopback address (their own `fetch` option). Several clients stream without a pause while one replica is rotated
 * (INFINITE) and while the deployment scales down to one: every stream completes, every answer has the spec's
 * members, and the drains that retired the replicas began with streams open to them.
 */
import {strict as assert} from 'node:assert'

import {PublicKey} from '@solana/web3.js'
import {Ollama} from 'ollama'
import OpenAI from 'openai'
import {Agent, fetch as undiciFetch} from 'undici'

import {drainBoundMs} from '../../../src/lib/deployments/draining.js'
import {loopbackLookup} from '../../../src/lib/http/client.js'
import {api, createDeployment, deploymentJobs} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {MODEL, modelServerImage, modelServerJob, modelServerMissing, SPEC_MEMBERS} from '../../helpers/model-server.js'
import {requirePodman} from '../../helpers/podman.js'

/**
 * The deployment's time_scale and rotation: 60-minute jobs last 40 s, a replacement listed 30 minutes (20 s) before
 * the end, so a replica being drained is far from the end of its job (at the default 20 minutes, 13.3 s, a slow
 * replacement left the old job's own end to cut a stream the drain was keeping).
 */
const TIME_SCALE = 90
const ROTATION_S = 1800
/** Each streamed piece of text this far apart, 30 of them: streams of about 3 s, longer than a drain's start. */
const TOKEN_DELAY_MS = 100
const TOKENS = 30
/** Clients streaming side by side: each replica always has some open. */
const CLIENTS = 6

/** A drain the manager ran, as seen from the gateway: what was in flight to its job when it began. */
interface SeenDrain {
  job: string
  inFlightAtStart: number
  startedAt: number
  endedAt?: number
}

describe('streamed completions through the stable URL while replicas are retired (model server, podman, 4 nodes)', function () {
  this.timeout(300_000)
  before(function () {
    const missing = modelServerMissing()
    if (!missing) return
    if (process.env.CI === 'true') throw new Error(`the model server is required under CI=true: ${missing}`)
    process.stderr.write(`\n  !!! SKIPPING the model server's streams: ${missing}\n\n`)
    this.skip()
  })
  const podman = requirePodman()
  // The drain bound set (30 min, 20 s at this time_scale) rather than the default: the setting reaches the manager.
  const t = useLocalnet({
    node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0, nodes: 4},
    drainTimeoutMs: 1_800_000,
  })
  let image = ''
  before(async function () {
    this.timeout(240_000)
    image = await modelServerImage(podman.dataDir())
  })

  it('every stream of the ollama and openai clients completes through a rotation and a scale-down', async () => {
    const url = t.ln.runtime.deploymentManager!
    const ctx = t.ln.manager!.context
    assert.equal(drainBoundMs(ctx, TIME_SCALE), 20_000, 'the drainTimeout setting, divided by the time_scale')
    const gateway = t.ln.agent!.gateway
    const drains: SeenDrain[] = []
    const draining = ctx.draining!
    const drain = draining.drain.bind(draining)
    draining.drain = async (job, maxMs) => {
      const seen: SeenDrain = {job, inFlightAtStart: gateway.inFlight(job), startedAt: Date.now()}
      drains.push(seen)
      try {
        return await drain(job, maxMs)
      } finally {
        seen.endedAt = Date.now()
      }
    }

    const d = await createDeployment(url, t.wallet, {
      job_definition: modelServerJob(image, TOKEN_DELAY_MS),
      replicas: 2,
      strategy: 'INFINITE',
      timeout: 60,
      rotation_time: ROTATION_S,
      time_scale: TIME_SCALE,
    })
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 1_000_000_000n, tokens: 100_000_000n})
    assert.equal((await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    const stable = gateway.deploymentUrl(d.id).replace(/\/$/, '')
    // The clients' own options: the stable URL, and a fetch that finds `*.localhost` on 127.0.0.1 (the Host header
    // is the stable URL's, which the gateway routes on).
    const dispatcher = new Agent({connect: {lookup: loopbackLookup}})
    const fetch = ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, {...(init as object), dispatcher})) as unknown as typeof globalThis.fetch
    const ollama = new Ollama({host: stable, fetch})
    const openai = new OpenAI({baseURL: `${stable}/v1`, apiKey: 'unused', maxRetries: 0, fetch})
    await eventually('both replicas serving the model at the stable URL', 120_000, async () => {
      const rows = await deploymentJobs(url, t.wallet, d.id)
      if (rows.filter((r) => r.state === 'RUNNING').length < 2) return undefined
      const models = await ollama.list().catch(() => null)
      return models?.models.some((m) => m.name.startsWith(MODEL)) ? true : undefined
    })

    const failures: string[] = []
    const begun = Date.now()
    const completed = {ollama: 0, completions: 0, chat: 0}
    let running = true
    const streamOnce = async (turn: number) => {
      const prompt = `deploy ${turn}`
      if (turn % 3 === 0) {
        const parts = []
        for await (const part of await ollama.generate({
          model: MODEL,
          prompt,
          stream: true,
          options: {num_predict: TOKENS},
        }))
          parts.push(part)
        const final = parts.at(-1)!
        assert.ok(parts.length > 2, 'streamed in pieces')
        for (const [member, type] of Object.entries(SPEC_MEMBERS))
          assert.equal(typeof final[member as keyof typeof final], type, `${member} of ${JSON.stringify(final)}`)
        assert.deepEqual([final.done, final.done_reason, final.eval_count], [true, 'length', TOKENS])
        assert.equal(final.context.length, final.prompt_eval_count + final.eval_count)
        completed.ollama++
      } else if (turn % 3 === 1) {
        const chunks = []
        const stream = await openai.completions.create({
          model: MODEL,
          prompt,
          max_tokens: TOKENS,
          stream: true,
          stream_options: {include_usage: true},
        })
        for await (const chunk of stream) chunks.push(chunk)
        assert.equal(chunks.findLast((c) => c.choices.length > 0)!.choices[0]!.finish_reason, 'length')
        assert.equal(chunks.at(-1)!.usage?.completion_tokens, TOKENS, 'its usage, after the last piece')
        completed.completions++
      } else {
        const chunks = []
        const stream = await openai.chat.completions.create({
          model: MODEL,
          messages: [{role: 'user', content: prompt}],
          max_tokens: TOKENS,
          stream: true,
        })
        for await (const chunk of stream) chunks.push(chunk)
        assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant')
        assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'length')
        completed.chat++
      }
    }
    const loops = Array.from({length: CLIENTS}, async (_, client) => {
      for (let turn = client; running; turn += CLIENTS) {
        try {
          await streamOnce(turn)
        } catch (error) {
          const {message, status, status_code, cause} = error as Error & {status?: number; status_code?: number}
          const code = (cause as NodeJS.ErrnoException | undefined)?.code
          failures.push(
            `client ${client}, turn ${turn}, at ${Date.now() - begun} ms: ${message} (status ${status ?? status_code}, ${code})`,
          )
        }
      }
    })

    try {
      // A rotation: a replacement listed before a replica's end, the old one drained (streams open to it), then ended.
      const rotated = await eventually('a replica rotated out with streams open to it', 120_000, async () =>
        drains.find((seen) => seen.inFlightAtStart > 0 && seen.endedAt !== undefined),
      )
      const scaledAt = Date.now()
      const scaled = await api(url, t.wallet, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas: 1})
      assert.equal(scaled.status, 200, JSON.stringify(scaled.body))
      await eventually('scaled down to one replica, the other drained with streams open to it', 120_000, async () => {
        const rows = await deploymentJobs(url, t.wallet, d.id)
        const drained = drains.some((s) => s.startedAt >= scaledAt && s.inFlightAtStart > 0 && s.endedAt !== undefined)
        return drained && rows.filter((r) => r.state === 'RUNNING').length === 1 ? true : undefined
      })
      assert.ok(rotated.inFlightAtStart > 0)
    } finally {
      running = false
      await Promise.all(loops)
      await dispatcher.close()
    }
    const drained = drains.map((s) => ({...s, startedAt: s.startedAt - begun, endedAt: (s.endedAt ?? 0) - begun}))
    assert.deepEqual(failures, [], `${failures.length} stream(s) failed; drains ${JSON.stringify(drained)}`)
    assert.ok(completed.ollama > 0 && completed.completions > 0 && completed.chat > 0, JSON.stringify(completed))
    assert.equal((await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
  })
})
