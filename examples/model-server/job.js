#!/usr/bin/env node
// Prints a job definition that runs this folder's server on a node with the host-process runtime
// (`gpunet localnet start --host-processes`). That runtime starts entrypoint + cmd in a fresh temporary folder
// with only PATH and HOME set, so the definition names this Node and this server.js by their absolute paths:
// it runs on this machine only, where this folder is installed.
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

const folder = dirname(fileURLToPath(import.meta.url))

/** The definition for a server on `port` pausing `tokenDelayMs` before each piece of text. */
function jobDefinition({port = 11434, tokenDelayMs = 0} = {}) {
  return {
    version: '0.1',
    type: 'container',
    meta: {
      trigger: 'cli',
      description:
        'A tiny llama.cpp model server (Ollama /api/generate, OpenAI /v1/*) from examples/model-server, as a host process.',
    },
    ops: [
      {
        id: 'model-server',
        type: 'container/run',
        args: {
          // The host-process runtime runs no image; a container runtime would need one with this folder in it.
          image: 'docker.io/library/node:20-bookworm-slim',
          entrypoint: [process.execPath],
          cmd: [join(folder, 'server.js')],
          env: {
            PORT: String(port),
            TOKEN_DELAY_MS: String(tokenDelayMs),
            // Relative: written in the operation's own temporary folder when it starts, removed with it.
            MODEL_PATH: 'tiny-random-llama.gguf',
          },
          expose: [
            {
              port,
              type: 'api',
              health_checks: [
                {
                  type: 'http',
                  path: '/api/generate',
                  method: 'POST',
                  expected_status: 200,
                  headers: {'Content-Type': 'application/json'},
                  body: {model: 'tiny-random-llama', prompt: 'Say OK.', stream: false, options: {num_predict: 1}},
                },
              ],
            },
          ],
        },
      },
    ],
  }
}

const {values} = parseArgs({
  options: {port: {type: 'string', default: '11434'}, 'token-delay-ms': {type: 'string', default: '0'}},
})
const port = Number(values.port)
const tokenDelayMs = Number(values['token-delay-ms'])
if (!Number.isInteger(port) || port < 1 || port > 65535 || !Number.isInteger(tokenDelayMs) || tokenDelayMs < 0) {
  console.error('usage: npm run --silent job -- [--port 1-65535] [--token-delay-ms D] > model-server.json')
  process.exit(2)
}
console.log(JSON.stringify(jobDefinition({port, tokenDelayMs}), null, 2))
