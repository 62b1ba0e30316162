/**
 * The example model server (examples/model-server) as a localnet service: a podman image `FROM scratch` holding the
 * node binary, the libraries it and llama.cpp's CPU build link, and the example's folder with its model, so that
 * several replicas run side by side offline (host processes could not: each would listen on the same port). Built
 * once per content of the example (its tag is a digest of its files and of node).
 */
import {execFile} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {cp, mkdir, mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {podman} from './podman.js'

const run = promisify(execFile)

/** The example's folder. */
export const MODEL_SERVER_DIR = fileURLToPath(new URL('../../examples/model-server/', import.meta.url))

/** The model the example serves (write-model.js's name). */
export const MODEL = 'tiny-random-llama'

/** The port the server listens on in its container (its default, Ollama's). */
export const MODEL_PORT = 11434

/** The Ollama members of the spec's final answer (/work spec: "api/generate"), and their types. */
export const SPEC_MEMBERS = {
  model: 'string',
  created_at: 'string',
  response: 'string',
  done: 'boolean',
  done_reason: 'string',
  context: 'object',
  total_duration: 'number',
  load_duration: 'number',
  prompt_eval_count: 'number',
  prompt_eval_duration: 'number',
  eval_count: 'number',
  eval_duration: 'number',
} as const

/** Why the example cannot run here (its install is missing), or null. */
export function modelServerMissing(): string | null {
  if (!existsSync(join(MODEL_SERVER_DIR, 'node_modules', 'node-llama-cpp')))
    return 'examples/model-server/node_modules is missing: run `npm ci` in examples/model-server (.ci/run does)'
  return null
}

/** Writes the example's model unless it is there: what `npm start` does first, done once rather than by each replica. */
export async function writeModelIfMissing(): Promise<void> {
  if (!existsSync(join(MODEL_SERVER_DIR, 'models', `${MODEL}.gguf`)))
    await run(process.execPath, [join(MODEL_SERVER_DIR, 'write-model.js')])
}

/** The image's tag, building it first when this machine has none of this content. */
export async function modelServerImage(dataDir: string): Promise<string> {
  await writeModelIfMissing()
  const digest = createHash('sha256').update(process.version)
  for (const file of ['server.js', 'model.js', 'write-model.js', 'package-lock.json'])
    digest.update(readFileSync(join(MODEL_SERVER_DIR, file)))
  const tag = `localhost/gpunet-test-model-server:${digest.digest('hex').slice(0, 16)}`
  if ((await podman(dataDir, ['image', 'exists', tag])).code === 0) return tag
  const root = await mkdtemp(join(tmpdir(), 'gpunet-model-rootfs-'))
  try {
    await mkdir(join(root, 'tmp'))
    await cp(process.execPath, join(root, 'usr/bin/node'))
    const bins = join(MODEL_SERVER_DIR, 'node_modules/@node-llama-cpp/linux-x64/bins/linux-x64')
    const linked = [
      process.execPath,
      ...readdirSync(bins)
        .filter((f) => f.endsWith('.node'))
        .map((f) => join(bins, f)),
    ]
    for (const library of await systemLibraries(linked)) await cp(library, join(root, library), {dereference: true})
    await cp(MODEL_SERVER_DIR, join(root, 'app'), {
      recursive: true,
      dereference: true,
      filter: (source) => !source.startsWith(join(MODEL_SERVER_DIR, 'test')),
    })
    const tarball = `${root}.tar`
    await run('tar', ['-C', root, '-cf', tarball, '.'])
    const change = ['--change', 'CMD ["/usr/bin/node", "/app/server.js"]', '--change', 'ENV PATH=/usr/bin HOME=/tmp']
    const own = `${tag}-building-${process.pid}`
    const imported = await podman(dataDir, ['import', ...change, tarball, own])
    await rm(tarball, {force: true})
    if (imported.code !== 0) throw new Error(`podman import of ${tag} failed`)
    if ((await podman(dataDir, ['tag', own, tag])).code !== 0) throw new Error(`podman tag ${tag} failed`)
    await podman(dataDir, ['untag', own, own])
    return tag
  } finally {
    await rm(root, {recursive: true, force: true})
  }
}

/** The system libraries the binaries link (their absolute paths, as ldd resolves them), the loader included. */
async function systemLibraries(binaries: string[]): Promise<string[]> {
  const found = new Set<string>()
  for (const binary of binaries) {
    const {stdout} = await run('ldd', [binary])
    for (const [path] of stdout.matchAll(/\/\S+/g))
      if (!path.startsWith(dirname(binary)) && !path.startsWith(MODEL_SERVER_DIR)) found.add(path)
  }
  return [...found].filter((path) => existsSync(path) && !path.includes('node_modules'))
}

/** A job definition of the server in `image`, each streamed piece of text `tokenDelayMs` apart. */
export function modelServerJob(image: string, tokenDelayMs: number) {
  return {
    version: '0.1',
    type: 'container',
    ops: [
      {
        id: 'model',
        type: 'container/run',
        args: {
          image,
          cmd: ['/usr/bin/node', '/app/server.js', '--host', '0.0.0.0', '--token-delay-ms', String(tokenDelayMs)],
          expose: [
            {port: MODEL_PORT, health_checks: [{type: 'http', method: 'GET', path: '/api/tags', expected_status: 200}]},
          ],
        },
      },
    ],
  }
}
