/**
 * Issue 58: what the stable URL costs a streamed completion. One localnet, one deployment of one replica of the
 * example model server (examples/model-server: llama.cpp on its tiny random model, host process, no per-token
 * delay), and Ollama `/api/generate` streams taken in turn straight from the replica's port, through its job's URL
 * and through the deployment's stable URL, so all three see the same machine at the same moments: the median time
 * to the first token and tokens per second of each, and the stable URL's against the replica's.
 */
import {request} from 'node:http'
import {join} from 'node:path'

import {MODEL, MODEL_SERVER_DIR, modelServerMissing, writeModelIfMissing} from '../test/helpers/model-server.js'
import {oneReplicaDeployment, quantile} from './one-replica.js'

const STREAMS = 41
const WARM_UP = 3
const TOKENS = 64

/** One stream's figures: ms to its first token, tokens per second after it. */
interface StreamFigures {
  firstTokenMs: number
  tokensPerSecond: number
}

export default async function bench(): Promise<void> {
  const missing = modelServerMissing()
  if (missing) {
    process.stdout.write(`model server: ${missing}; skipped\n`)
    return
  }
  await writeModelIfMissing()
  const server = join(MODEL_SERVER_DIR, 'server.js')
  const {gateway, stable, job, port, close} = await oneReplicaDeployment(
    'streams',
    (p) => `exec ${process.execPath} ${server} --port ${p} --host 127.0.0.1 --token-delay-ms 0 --parallel 1`,
    '/api/tags',
  )
  try {
    const cases = [
      {name: 'replica port', url: `http://127.0.0.1:${port}/`, samples: [] as StreamFigures[]},
      {name: 'job URL', url: gateway.jobUrl(job), samples: [] as StreamFigures[]},
      {name: 'stable URL', url: stable, samples: [] as StreamFigures[]},
    ]
    for (let i = 0; i < WARM_UP; i++) for (const c of cases) await stream(c.url)
    // Each round begins with another case: a stream that follows another at once may wait on the server's cleanup
    // of the one before, which must not always fall on the same URL.
    for (let i = 0; i < STREAMS; i++)
      for (const c of [...cases.slice(i % cases.length), ...cases.slice(0, i % cases.length)])
        c.samples.push(await stream(c.url))
    const medians = cases.map((c) => ({
      firstTokenMs: quantile(
        c.samples.map((s) => s.firstTokenMs),
        0.5,
      ),
      tokensPerSecond: quantile(
        c.samples.map((s) => s.tokensPerSecond),
        0.5,
      ),
    }))
    for (const [i, c] of cases.entries())
      process.stdout.write(
        `  ${c.name.padEnd(13)} n=${STREAMS} of ${TOKENS} tokens  first token median ${medians[i]!.firstTokenMs.toFixed(2)} ms  ` +
          `${medians[i]!.tokensPerSecond.toFixed(0)} tokens/s\n`,
      )
    const [direct, , viaStable] = medians as [StreamFigures, StreamFigures, StreamFigures]
    process.stdout.write(
      `  stable / replica: first token ${(viaStable.firstTokenMs / direct.firstTokenMs).toFixed(2)}x ` +
        `(${signed(viaStable.firstTokenMs - direct.firstTokenMs)} ms), tokens/s ` +
        `${(viaStable.tokensPerSecond / direct.tokensPerSecond).toFixed(2)}x\n`,
    )
  } finally {
    await close()
  }
}

/** One streamed /api/generate at `url` (127.0.0.1 with the URL's Host header), timed from its request. */
function stream(url: string): Promise<StreamFigures> {
  const {host, port} = new URL(url)
  const body = JSON.stringify({model: MODEL, prompt: 'the stable URL', stream: true, options: {num_predict: TOKENS}})
  return new Promise((resolve, reject) => {
    const start = performance.now()
    let first = 0
    let text = ''
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/api/generate',
        headers: {host, 'content-type': 'application/json'},
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`))
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          first ||= performance.now()
          text += chunk
        })
        res.on('end', () => {
          const end = performance.now()
          const final = JSON.parse(text.trim().split('\n').at(-1)!) as {done: boolean; eval_count: number}
          if (!final.done || final.eval_count !== TOKENS) return reject(new Error(`${url}: ${JSON.stringify(final)}`))
          resolve({firstTokenMs: first - start, tokensPerSecond: ((TOKENS - 1) * 1000) / (end - first)})
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** A difference with its sign: +4.15, -0.58. */
function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`
}
