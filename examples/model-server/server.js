#!/usr/bin/env node
// A model server answering Ollama's /api/generate and /api/tags and OpenAI's /v1/models, /v1/completions and
// /v1/chat/completions, streamed and not, from the tiny model write-model.js writes (or any GGUF at MODEL_PATH).
import {randomUUID} from 'node:crypto'
import {existsSync} from 'node:fs'
import {createServer} from 'node:http'
import {resolve} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {parseArgs} from 'node:util'
import {BadRequest, loadModel} from './model.js'
import {DEFAULT_MODEL_PATH, writeModel} from './write-model.js'

const USAGE = `usage: node server.js [--port P] [--host H] [--token-delay-ms D] [--model PATH] [--parallel N] [--max-tokens N]

  --port, PORT                     port to listen on (default 11434, Ollama's)
  --host, HOST                     address to listen on (default 0.0.0.0)
  --token-delay-ms, TOKEN_DELAY_MS pause before each streamed piece of text, so a stream lasts (default 0)
  --model, MODEL_PATH              the GGUF model (default models/tiny-random-llama.gguf, written if missing)
  --parallel, PARALLEL             requests answered at once; more wait their turn (default 4)
  --max-tokens, MAX_TOKENS         tokens generated when a request sets no limit (default 128)`

const MAX_BODY_BYTES = 1024 * 1024

/** A request the server refuses, with the HTTP status and the message the client sees. */
class HttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/** The settings from the command line, then the environment, then the defaults; exits 2 on a bad one. */
function settings(argv, env) {
  const usageError = (message) => {
    console.error(`error: ${message}\n\n${USAGE}`)
    process.exit(2)
  }
  let values
  try {
    ;({values} = parseArgs({
      args: argv,
      options: {
        port: {type: 'string'},
        host: {type: 'string'},
        'token-delay-ms': {type: 'string'},
        model: {type: 'string'},
        parallel: {type: 'string'},
        'max-tokens': {type: 'string'},
        help: {type: 'boolean', short: 'h'},
      },
    }))
  } catch (error) {
    usageError(error.message)
  }
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const integer = (name, raw, fallback, min, max) => {
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min || value > max)
      usageError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return value
  }
  return {
    port: integer('--port/PORT', values.port ?? env.PORT, 11434, 0, 65535),
    host: values.host ?? env.HOST ?? '0.0.0.0',
    tokenDelayMs: integer(
      '--token-delay-ms/TOKEN_DELAY_MS',
      values['token-delay-ms'] ?? env.TOKEN_DELAY_MS,
      0,
      0,
      60_000,
    ),
    modelPath: resolve(values.model ?? env.MODEL_PATH ?? DEFAULT_MODEL_PATH),
    parallel: integer('--parallel/PARALLEL', values.parallel ?? env.PARALLEL, 4, 1, 64),
    maxTokens: integer('--max-tokens/MAX_TOKENS', values['max-tokens'] ?? env.MAX_TOKENS, 128, 1, 100_000),
  }
}

/** Reads a JSON object body of at most MAX_BODY_BYTES. */
async function readJson(req) {
  const chunks = []
  let size = 0
  for await (const chunk of req) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  let body
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${error.message}`)
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'request body must be a JSON object')
  return body
}

/** Checks one optional field of a request body: its type and range. */
function field(body, name, kind, {min = -Infinity, max = Infinity} = {}) {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  const ok =
    kind === 'string'
      ? typeof value === 'string'
      : kind === 'boolean'
        ? typeof value === 'boolean'
        : kind === 'integer'
          ? Number.isInteger(value) && value >= min && value <= max
          : kind === 'number'
            ? typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max
            : false
  if (!ok) {
    const range = Number.isFinite(min) || Number.isFinite(max) ? ` from ${min} to ${max}` : ''
    throw new HttpError(400, `"${name}" must be ${kind === 'integer' ? 'an' : 'a'} ${kind}${range}`)
  }
  return value
}

/** `stop` as one string or a list of up to 4 strings (OpenAI's and Ollama's rule). */
function stopList(body) {
  const stop = body.stop
  if (stop === undefined || stop === null) return undefined
  const list = typeof stop === 'string' ? [stop] : stop
  if (!Array.isArray(list) || list.length > 4 || !list.every((item) => typeof item === 'string' && item.length > 0))
    throw new HttpError(400, '"stop" must be a non-empty string or a list of up to 4 of them')
  return list
}

/**
 * The text the model generates, handed on with `delayMs` before each piece: generation runs at full speed (and frees
 * its sequence when done); only what the client sees is paced.
 */
function pacedText(delayMs) {
  const pieces = []
  let wake = null
  let ended = false
  return {
    push(text) {
      if (text === '') return
      pieces.push(text)
      wake?.()
    },
    end() {
      ended = true
      wake?.()
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (pieces.length === 0) {
          if (ended) return
          await new Promise((resolveWake) => (wake = resolveWake))
          wake = null
          continue
        }
        if (delayMs > 0) await sleep(delayMs)
        yield pieces.shift()
      }
    },
  }
}

/** Starts the server: loads the model (writing the default one if missing), then listens. */
async function main() {
  const config = settings(process.argv.slice(2), process.env)
  if (!existsSync(config.modelPath)) {
    const size = writeModel(config.modelPath)
    console.log(`wrote the tiny random model to ${config.modelPath} (${Math.round(size / 1024)} KB)`)
  }
  const model = await loadModel({modelPath: config.modelPath, parallel: config.parallel})
  const names = new Set([model.name, `${model.name}:latest`])
  const open = new Set()
  let draining = false

  const requireModel = (body) => {
    const name = field(body, 'model', 'string')
    if (!name) throw new HttpError(400, '"model" is required')
    if (!names.has(name)) throw new HttpError(404, `model "${name.slice(0, 200)}" not found, try "${model.name}"`)
    return name
  }

  /**
   * Generates with `generate` (model.complete or model.chat), handing each piece of text to `piece` as it comes;
   * `begin` runs once the request passed the model's checks, so a refused one still gets its status.
   */
  async function run(generate, options, res, {begin, piece}) {
    const abort = new AbortController()
    res.on('close', () => abort.abort())
    const pieces = pacedText(config.tokenDelayMs)
    const result = generate({...options, signal: abort.signal, onText: (text) => pieces.push(text)}).finally(() =>
      pieces.end(),
    )
    result.catch(() => {}) // awaited below, after the pieces; this only keeps an early failure from going unhandled
    begin?.()
    for await (const text of pieces) piece(text)
    return result
  }

  // A client gone mid-stream has aborted the generation; what is left of its answer goes nowhere.
  const write = (res, text) => !res.destroyed && res.write(text)
  const ndjson = (res) => {
    res.writeHead(200, {'content-type': 'application/x-ndjson'})
    res.flushHeaders()
  }
  const sse = (res) => {
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'})
    res.flushHeaders()
  }
  const sendJson = (res, status, value) => {
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(JSON.stringify(value))
  }

  async function ollamaGenerate(req, res) {
    const body = await readJson(req)
    const name = requireModel(body)
    const prompt = field(body, 'prompt', 'string') ?? ''
    const stream = field(body, 'stream', 'boolean') ?? true
    const context = body.context ?? undefined
    if (
      context !== undefined &&
      (!Array.isArray(context) || !context.every((t) => Number.isInteger(t) && t >= 0 && t < model.vocabularySize))
    )
      throw new HttpError(400, `"context" must be a list of token ids from 0 to ${model.vocabularySize - 1}`)
    const o = body.options ?? {}
    if (typeof o !== 'object' || Array.isArray(o)) throw new HttpError(400, '"options" must be an object')
    const numPredict = field(o, 'num_predict', 'integer', {min: -2, max: 1_000_000})
    if (numPredict === 0)
      throw new HttpError(400, '"options.num_predict" must be positive, or -1 for up to the context')
    const options = {
      prompt,
      context,
      maxTokens: numPredict === undefined ? config.maxTokens : numPredict < 0 ? undefined : numPredict,
      temperature: field(o, 'temperature', 'number', {min: 0, max: 100}) ?? 0.8,
      topK: field(o, 'top_k', 'integer', {min: 0, max: 1_000_000}),
      topP: field(o, 'top_p', 'number', {min: 0, max: 1}),
      seed: field(o, 'seed', 'integer', {min: 0, max: 2 ** 32 - 1}),
      stop: stopList(o),
    }
    const createdAt = () => new Date().toISOString()
    const result = await run(model.complete, options, res, {
      begin: () => stream && ndjson(res),
      piece: (text) =>
        stream &&
        write(res, JSON.stringify({model: name, created_at: createdAt(), response: text, done: false}) + '\n'),
    })
    const final = {
      model: name,
      created_at: createdAt(),
      response: stream ? '' : result.text,
      done: true,
      done_reason: result.stopReason,
      context: [...result.promptTokens, ...result.outputTokens],
      total_duration: result.totalDuration,
      load_duration: result.loadDuration,
      prompt_eval_count: result.promptTokens.length,
      prompt_eval_duration: result.promptEvalDuration,
      eval_count: result.outputTokens.length,
      eval_duration: result.evalDuration,
    }
    if (stream) res.end(JSON.stringify(final) + '\n')
    else sendJson(res, 200, final)
  }

  function ollamaTags(res) {
    const entry = {
      name: `${model.name}:latest`,
      model: `${model.name}:latest`,
      modified_at: model.modifiedAt.toISOString(),
      size: model.size,
      digest: model.digest,
      details: {
        parent_model: '',
        format: 'gguf',
        family: 'llama',
        families: ['llama'],
        parameter_size: `${Math.round(model.parameters / 1000)}K`,
        quantization_level: 'F32',
      },
    }
    sendJson(res, 200, {models: [entry]})
  }

  function openaiModels(res) {
    const created = Math.floor(model.modifiedAt.getTime() / 1000)
    sendJson(res, 200, {object: 'list', data: [{id: model.name, object: 'model', created, owned_by: 'gpunet-example'}]})
  }

  /** The fields /v1/completions and /v1/chat/completions share. */
  function openaiOptions(body, maxTokensField) {
    const n = field(body, 'n', 'integer', {min: 1, max: 1})
    if (n !== undefined && n !== 1) throw new HttpError(400, '"n" must be 1')
    const maxTokens =
      field(body, maxTokensField, 'integer', {min: 1, max: 1_000_000}) ??
      field(body, 'max_tokens', 'integer', {min: 1, max: 1_000_000})
    const streamOptions = body.stream_options ?? {}
    return {
      name: requireModel(body),
      stream: field(body, 'stream', 'boolean') ?? false,
      includeUsage: streamOptions.include_usage === true,
      options: {
        maxTokens: maxTokens ?? config.maxTokens,
        temperature: field(body, 'temperature', 'number', {min: 0, max: 2}) ?? 1,
        topP: field(body, 'top_p', 'number', {min: 0, max: 1}),
        seed: field(body, 'seed', 'integer', {min: 0, max: 2 ** 32 - 1}),
        stop: stopList(body),
      },
    }
  }

  const usage = (result) => ({
    prompt_tokens: result.promptTokens.length,
    completion_tokens: result.outputTokens.length,
    total_tokens: result.promptTokens.length + result.outputTokens.length,
  })
  const sseData = (res, value) => write(res, `data: ${JSON.stringify(value)}\n\n`)

  async function openaiCompletions(req, res) {
    const body = await readJson(req)
    const {name, stream, includeUsage, options} = openaiOptions(body, 'max_tokens')
    const prompt = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt
    if (typeof prompt !== 'string') throw new HttpError(400, '"prompt" must be a string (or a list of one string)')
    const id = `cmpl-${randomUUID()}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (text, finishReason) => ({
      id,
      object: 'text_completion',
      created,
      model: name,
      choices: [{text, index: 0, logprobs: null, finish_reason: finishReason}],
    })
    const result = await run(model.complete, {...options, prompt}, res, {
      begin: () => stream && sse(res),
      piece: (text) => stream && sseData(res, chunk(text, null)),
    })
    if (!stream) return sendJson(res, 200, {...chunk(result.text, result.stopReason), usage: usage(result)})
    sseData(res, chunk('', result.stopReason))
    if (includeUsage)
      sseData(res, {id, object: 'text_completion', created, model: name, choices: [], usage: usage(result)})
    res.end('data: [DONE]\n\n')
  }

  async function openaiChat(req, res) {
    const body = await readJson(req)
    const {name, stream, includeUsage, options} = openaiOptions(body, 'max_completion_tokens')
    const messages = body.messages
    if (!Array.isArray(messages) || messages.length === 0)
      throw new HttpError(400, '"messages" must be a non-empty list')
    const history = messages.map((message, i) => {
      const role = message?.role === 'developer' ? 'system' : message?.role
      if (!['system', 'user', 'assistant'].includes(role))
        throw new HttpError(400, `messages[${i}].role must be system, developer, user or assistant`)
      const content = Array.isArray(message.content)
        ? message.content
            .map((part) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : ''))
            .join('')
        : message.content
      if (typeof content !== 'string') throw new HttpError(400, `messages[${i}].content must be a string or text parts`)
      return {role, content}
    })
    const id = `chatcmpl-${randomUUID()}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (delta, finishReason) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: name,
      choices: [{index: 0, delta, logprobs: null, finish_reason: finishReason}],
    })
    const result = await run(model.chat, {...options, messages: history}, res, {
      begin: () => {
        if (!stream) return
        sse(res)
        sseData(res, chunk({role: 'assistant', content: ''}, null))
      },
      piece: (text) => stream && sseData(res, chunk({content: text}, null)),
    })
    if (!stream)
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: name,
        choices: [
          {
            index: 0,
            message: {role: 'assistant', content: result.text, refusal: null},
            logprobs: null,
            finish_reason: result.stopReason,
          },
        ],
        usage: usage(result),
      })
    sseData(res, chunk({}, result.stopReason))
    if (includeUsage)
      sseData(res, {id, object: 'chat.completion.chunk', created, model: name, choices: [], usage: usage(result)})
    res.end('data: [DONE]\n\n')
  }

  const routes = {
    'GET /': (req, res) => {
      res.writeHead(200, {'content-type': 'text/plain; charset=utf-8'})
      res.end('Ollama is running')
    },
    'POST /api/generate': ollamaGenerate,
    'GET /api/tags': (req, res) => ollamaTags(res),
    'GET /v1/models': (req, res) => openaiModels(res),
    'POST /v1/completions': openaiCompletions,
    'POST /v1/chat/completions': openaiChat,
  }

  /** An error as the API the path belongs to reports one: OpenAI's error object, else Ollama's {error}. */
  function sendError(req, res, status, message) {
    const openai = req.url.startsWith('/v1/')
    if (res.headersSent) {
      // Mid-stream: the status is gone; tell the client in the stream's own format, then end it.
      if (openai)
        res.end(`data: ${JSON.stringify({error: {message, type: 'server_error', param: null, code: null}})}\n\n`)
      else res.end(JSON.stringify({error: message}) + '\n')
      return
    }
    if (openai)
      sendJson(res, status, {
        error: {message, type: status < 500 ? 'invalid_request_error' : 'server_error', param: null, code: null},
      })
    else sendJson(res, status, {error: message})
  }

  const server = createServer(async (req, res) => {
    open.add(res)
    res.on('close', () => {
      open.delete(res)
      if (draining && open.size === 0) finish()
    })
    // While draining, an answer is a connection's last, so keep-alive clients reconnect elsewhere.
    if (draining) res.setHeader('connection', 'close')
    const path = new URL(req.url, 'http://localhost').pathname
    const route = routes[`${req.method} ${path}`]
    try {
      if (!route) {
        const known = Object.keys(routes).some((key) => key.endsWith(` ${path}`))
        throw new HttpError(known ? 405 : 404, known ? `${req.method} is not allowed on ${path}` : `no route ${path}`)
      }
      await route(req, res)
    } catch (error) {
      const status = error instanceof HttpError ? error.status : error instanceof BadRequest ? 400 : 500
      // The rest of a body over the bound is never read: its connection cannot carry another request.
      if (status === 413 && !res.headersSent) res.setHeader('connection', 'close')
      if (status === 500) console.error(`${req.method} ${path}: ${error.stack ?? error}`)
      if (!res.writableEnded && !res.destroyed) sendError(req, res, status, error.message)
    }
  })

  let finished = false
  async function finish() {
    if (finished) return
    finished = true
    server.closeAllConnections()
    await model.close()
    console.log('stopped')
    process.exit(0)
  }
  const drain = (signal) => {
    if (draining) return
    draining = true
    console.log(`${signal}: finishing ${open.size} open request(s), accepting no new connections`)
    server.close()
    server.closeIdleConnections()
    if (open.size === 0) finish()
  }
  process.on('SIGTERM', () => drain('SIGTERM'))
  process.on('SIGINT', () => drain('SIGINT'))

  server.listen(config.port, config.host, () => {
    const {port} = server.address()
    console.log(
      `serving ${model.name} (${model.file}, context ${model.contextSize} tokens, loaded in ` +
        `${Math.round(Number(model.loadDuration) / 1e6)} ms) on http://${config.host}:${port}` +
        ` (token delay ${config.tokenDelayMs} ms, ${config.parallel} at once)`,
    )
  })
}

main().catch((error) => {
  console.error(`error: ${error.message}`)
  process.exit(1)
})
