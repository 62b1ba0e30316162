// The example end to end: the model written, the server started as `npm start` starts it, and the official
// `ollama` and `openai` clients answered through both APIs, streamed and not.
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import {Ollama} from 'ollama'
import OpenAI from 'openai'

const folder = dirname(dirname(fileURLToPath(import.meta.url)))
const MODEL = 'tiny-random-llama'
// The members the spec gives an inference container's /api/generate answer.
const SPEC_MEMBERS = {
  model: 'string',
  created_at: 'string',
  response: 'string',
  done: 'boolean',
  done_reason: 'string',
  total_duration: 'number',
  load_duration: 'number',
  prompt_eval_count: 'number',
  prompt_eval_duration: 'number',
  eval_count: 'number',
  eval_duration: 'number',
}

/** Starts server.js with `args` and env; resolves once it says where it listens. */
function startServer(args, env) {
  const child = spawn(process.execPath, ['server.js', '--host', '127.0.0.1', '--port', '0', ...args], {
    cwd: folder,
    env: {...process.env, ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise((resolveExit) => child.on('exit', (code, signal) => resolveExit({code, signal})))
  const url = new Promise((resolveUrl, reject) => {
    const onData = (chunk) => {
      output += chunk
      const match = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match) resolveUrl(match[1])
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    exited.then(({code, signal}) => reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`)))
  })
  return {child, url, exited, output: () => output}
}

/** The chunks of an async iterable, collected. */
async function collect(iterable) {
  const chunks = []
  for await (const chunk of iterable) chunks.push(chunk)
  return chunks
}

describe('the model server example', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'model-server-test-'))
  const modelPath = join(scratch, 'model.gguf')
  let server
  let ollama
  let openai

  before(async () => {
    server = startServer([], {MODEL_PATH: modelPath})
    const url = await server.url
    ollama = new Ollama({host: url})
    openai = new OpenAI({baseURL: `${url}/v1`, apiKey: 'not-checked', maxRetries: 0})
  })

  after(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    rmSync(scratch, {recursive: true, force: true})
  })

  it('writes the missing model, a few hundred KB, before it serves', () => {
    assert.ok(existsSync(modelPath), server.output())
    const size = statSync(modelPath).size
    assert.ok(size > 100_000 && size < 1_000_000, `model is ${size} bytes`)
    assert.match(server.output(), /wrote the tiny random model/)
  })

  it("lists the model: Ollama's /api/tags and OpenAI's /v1/models", async () => {
    const {models} = await ollama.list()
    assert.deepEqual(
      models.map((m) => [m.name, m.size, m.details.format, m.details.family]),
      [[`${MODEL}:latest`, statSync(modelPath).size, 'gguf', 'llama']],
    )
    const page = await openai.models.list()
    assert.deepEqual(
      page.data.map((m) => m.id),
      [MODEL],
    )
  })

  it("Ollama /api/generate, streamed and not: the same answer for a seed, with the spec's members", async () => {
    const request = {model: MODEL, prompt: 'hello gpu network', options: {num_predict: 12, seed: 7}}
    const chunks = await collect(await ollama.generate({...request, stream: true}))
    const final = chunks.at(-1)
    assert.ok(chunks.length > 2, 'streams more than one piece')
    assert.ok(chunks.slice(0, -1).every((c) => c.done === false && c.response.length > 0))
    const streamed = chunks.map((c) => c.response).join('')

    const whole = await ollama.generate({...request, stream: false})
    for (const answer of [final, whole])
      for (const [member, type] of Object.entries(SPEC_MEMBERS))
        assert.equal(typeof answer[member], type, `${member} of ${JSON.stringify(answer)}`)
    assert.equal(whole.response, streamed)
    assert.ok(streamed.length > 0)
    for (const answer of [final, whole]) {
      assert.equal(answer.done, true)
      assert.equal(answer.done_reason, 'length')
      assert.equal(answer.eval_count, 12)
      assert.ok(Array.isArray(answer.context) && answer.context.every(Number.isInteger))
      assert.equal(answer.context.length, answer.prompt_eval_count + answer.eval_count)
      assert.ok(answer.total_duration >= answer.prompt_eval_duration + answer.eval_duration)
      assert.ok(!Number.isNaN(Date.parse(answer.created_at)))
    }
    assert.deepEqual(whole.context, final.context)
  })

  it("Ollama: an answer's context continues the text", async () => {
    const first = await ollama.generate({model: MODEL, prompt: 'deploy', stream: false, options: {num_predict: 4}})
    const next = await ollama.generate({
      model: MODEL,
      prompt: ' more',
      context: first.context,
      stream: false,
      options: {num_predict: 4},
    })
    assert.deepEqual(next.context.slice(0, first.context.length), first.context)
    assert.equal(next.context.length, next.prompt_eval_count + next.eval_count)
  })

  it('OpenAI /v1/completions, streamed and not, with usage', async () => {
    const request = {model: MODEL, prompt: 'the market', max_tokens: 10, seed: 3, temperature: 0.9}
    const whole = await openai.completions.create(request)
    assert.equal(whole.object, 'text_completion')
    assert.equal(whole.choices[0].finish_reason, 'length')
    assert.equal(whole.usage.completion_tokens, 10)
    assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + 10)

    const chunks = await collect(
      await openai.completions.create({...request, stream: true, stream_options: {include_usage: true}}),
    )
    const text = chunks.flatMap((c) => c.choices.map((choice) => choice.text)).join('')
    assert.equal(text, whole.choices[0].text)
    assert.equal(chunks.findLast((c) => c.choices.length > 0).choices[0].finish_reason, 'length')
    assert.deepEqual(chunks.at(-1).usage, whole.usage)
  })

  it("OpenAI /v1/chat/completions, streamed and not, through the model's chat template", async () => {
    const request = {
      model: MODEL,
      messages: [
        {role: 'system', content: 'You answer briefly.'},
        {role: 'user', content: 'hello'},
      ],
      max_tokens: 8,
      seed: 11,
    }
    const whole = await openai.chat.completions.create(request)
    assert.equal(whole.object, 'chat.completion')
    assert.equal(whole.choices[0].message.role, 'assistant')
    assert.equal(typeof whole.choices[0].message.content, 'string')
    assert.equal(whole.choices[0].finish_reason, 'length')
    assert.equal(whole.usage.completion_tokens, 8)
    assert.ok(whole.usage.prompt_tokens > 2, 'the template adds to the messages')

    const chunks = await collect(await openai.chat.completions.create({...request, stream: true}))
    assert.equal(chunks[0].choices[0].delta.role, 'assistant')
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id))
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), whole.choices[0].message.content)
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'length')
  })

  it("refuses bad requests with a 4xx and a clear message, in each API's error shape", async () => {
    const url = await server.url
    const bad = await fetch(`${url}/api/generate`, {method: 'POST', body: '{not json'})
    assert.equal(bad.status, 400)
    assert.match((await bad.json()).error, /not valid JSON/)
    const big = await fetch(`${url}/v1/completions`, {method: 'POST', body: 'x'.repeat(2 * 1024 * 1024)})
    assert.equal(big.status, 413)
    assert.match((await big.json()).error.message, /over 1048576 bytes/)
    await assert.rejects(ollama.generate({model: 'nope', prompt: 'x', stream: false}), (error) => {
      assert.equal(error.status_code, 404)
      assert.match(error.message, /model "nope" not found/)
      return true
    })
    // Refused before the stream starts, so a streamed request gets its status too.
    const long = {model: MODEL, prompt: 'ab'.repeat(2100), stream: true}
    await assert.rejects(ollama.generate(long), (error) => {
      assert.equal(error.status_code, 400)
      assert.match(error.message, /the prompt is \d+ tokens; this model's context holds 2048/)
      return true
    })
    await assert.rejects(openai.completions.create({model: MODEL, prompt: 'x', max_tokens: -1}), (error) => {
      assert.equal(error.status, 400)
      assert.match(error.message, /"max_tokens" must be an integer from 1/)
      return true
    })
  })
})

describe('the model server on SIGTERM', () => {
  it('finishes an open stream, refuses new connections, then exits 0', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'model-server-drain-'))
    const server = startServer(['--token-delay-ms', '50'], {MODEL_PATH: join(scratch, 'model.gguf')})
    try {
      const url = await server.url
      const ollama = new Ollama({host: url})
      const stream = await ollama.generate({model: MODEL, prompt: 'stream', stream: true, options: {num_predict: 20}})
      const chunks = []
      for await (const chunk of stream) {
        // After the first piece, 19 more are each 50 ms away: the stream is open when the signal comes.
        if (chunks.length === 0) {
          server.child.kill('SIGTERM')
          await new Promise((resolveLog) => {
            const check = () =>
              /SIGTERM: finishing 1 open/.test(server.output()) ? resolveLog() : setTimeout(check, 10)
            check()
          })
          await assert.rejects(fetch(`${url}/api/tags`))
        }
        chunks.push(chunk)
      }
      assert.equal(chunks.at(-1).done, true)
      assert.equal(chunks.at(-1).eval_count, 20)
      assert.deepEqual(await server.exited, {code: 0, signal: null})
    } finally {
      server.child.kill('SIGKILL')
      rmSync(scratch, {recursive: true, force: true})
    }
  })
})
