// The model behind the server: node-llama-cpp's CPU build, one context with a few sequences, and generation
// that reports what the Ollama and OpenAI answers need (tokens, stop reason, durations).
import {createHash} from 'node:crypto'
import {readFile, stat} from 'node:fs/promises'
import {basename} from 'node:path'
import {getLlama, LlamaChat, LlamaCompletion, resolveChatWrapper} from 'node-llama-cpp'

/** A request the model cannot answer as asked (the server answers 400). */
export class BadRequest extends Error {}

const nowNs = () => process.hrtime.bigint()

/**
 * Loads the GGUF model at `modelPath` with `parallel` sequences (each answers one request at a time; more requests
 * wait for a free one) and returns the generation functions the server calls.
 */
export async function loadModel({modelPath, parallel = 4, threads = 1}) {
  const started = nowNs()
  // The prebuilt CPU binary only: never look for a GPU, never download or build llama.cpp (the example runs offline).
  const llama = await getLlama({gpu: false, build: 'never', logLevel: 'error'})
  const model = await llama.loadModel({modelPath})
  // One thread: on a shared machine llama.cpp's spinning threads cost far more than they give a model this small.
  const context = await model.createContext({sequences: parallel, contextSize: model.trainContextSize, threads})
  const bytes = await readFile(modelPath)
  const {mtime} = await stat(modelPath)
  const loadDuration = nowNs() - started
  const free = Array.from({length: parallel}, () => context.getSequence())
  const waiting = []

  const acquire = () =>
    free.length > 0 ? Promise.resolve(free.pop()) : new Promise((resolveSequence) => waiting.push(resolveSequence))
  const release = (sequence) => (waiting.length > 0 ? waiting.shift()(sequence) : free.push(sequence))

  /** Runs `generate` on a free sequence and times it as Ollama does (nanoseconds; prompt evaluation ends at the first token). */
  async function timed(generate) {
    const requested = nowNs()
    const sequence = await acquire()
    const acquired = nowNs()
    let firstToken = null
    const outputTokens = []
    const onToken = (tokens) => {
      firstToken ??= nowNs()
      outputTokens.push(...tokens)
    }
    try {
      const result = await generate(sequence, onToken)
      const ended = nowNs()
      firstToken ??= ended
      return {
        ...result,
        outputTokens,
        stopReason: result.stopReason === 'maxTokens' ? 'length' : 'stop',
        // Waiting for a free sequence is this server's counterpart of Ollama loading the model for a request.
        loadDuration: Number(acquired - requested),
        promptEvalDuration: Number(firstToken - acquired),
        evalDuration: Number(ended - firstToken),
        totalDuration: Number(ended - requested),
      }
    } finally {
      release(sequence)
    }
  }

  // Without a limit the answer fills the context: a limit is always set (at least one token, so never node-llama-cpp's
  // 0 for none), and context shifting is off, so no answer runs on forever (this model never ends its text itself).
  const room = (inputLength, what) => {
    const left = context.contextSize - inputLength - 1
    if (left < 1)
      throw new BadRequest(`${what} ${inputLength} tokens; this model's context holds ${context.contextSize}`)
    return left
  }
  const sampling = (options, room) => ({
    maxTokens: Math.min(options.maxTokens ?? Infinity, room),
    temperature: options.temperature,
    topK: options.topK,
    topP: options.topP,
    seed: options.seed,
    customStopTriggers: options.stop?.length ? options.stop : undefined,
    signal: options.signal,
    stopOnAbortSignal: true,
  })
  const chatWrapper = resolveChatWrapper(model)

  return {
    // The name the model gives itself (write-model.js: tiny-random-llama), else its file's.
    name: model.fileInfo.metadata.general?.name ?? basename(modelPath, '.gguf'),
    file: basename(modelPath),
    size: bytes.length,
    modifiedAt: mtime,
    digest: createHash('sha256').update(bytes).digest('hex'),
    parameters: model.fileInfo.tensorInfo.reduce((sum, t) => sum + t.dimensions.reduce((n, d) => n * Number(d), 1), 0),
    contextSize: context.contextSize,
    loadDuration,
    vocabularySize: model.fileInfo.metadata.tokenizer.ggml.tokens.length,

    /** A text completion of `prompt`, after the tokens of an earlier answer's `context` if given. */
    complete(options) {
      const earlier = options.context ?? []
      // The completion prepends the beginning-of-text token itself; an earlier context already starts with it.
      const input = [
        ...(earlier[0] === model.tokens.bos ? earlier.slice(1) : earlier),
        ...model.tokenize(options.prompt, false, 'trimLeadingSpace'),
      ]
      const left = room(input.length + 1, 'the prompt is')
      return timed(async (sequence, onToken) => {
        const completion = new LlamaCompletion({contextSequence: sequence})
        try {
          const {response, metadata} = await completion.generateCompletionWithMeta(input, {
            ...sampling(options, left),
            disableContextShift: true,
            onToken,
            onTextChunk: options.onText,
          })
          return {text: response, promptTokens: [model.tokens.bos, ...input], stopReason: metadata.stopReason}
        } finally {
          completion.dispose()
        }
      })
    },

    /** A chat answer to `messages` ({role: system|user|assistant, content}), rendered by the model's chat wrapper. */
    chat(options) {
      const history = options.messages.map((message) =>
        message.role === 'assistant'
          ? {type: 'model', response: [message.content]}
          : {type: message.role, text: message.content},
      )
      history.push({type: 'model', response: []})
      const {contextText} = chatWrapper.generateContextState({chatHistory: history})
      const promptTokens = contextText.tokenize(model.tokenizer)
      const left = room(promptTokens.length, 'the messages are')
      return timed(async (sequence, onToken) => {
        const chat = new LlamaChat({contextSequence: sequence, chatWrapper, autoDisposeSequence: false})
        try {
          const {response, metadata} = await chat.generateResponse(history, {
            ...sampling(options, left),
            onToken,
            onTextChunk: options.onText,
          })
          return {text: response, promptTokens, stopReason: metadata.stopReason}
        } finally {
          chat.dispose()
        }
      })
    },

    /** Frees the context, the model and llama.cpp. */
    async close() {
      await context.dispose()
      await model.dispose()
      await llama.dispose()
    },
  }
}
