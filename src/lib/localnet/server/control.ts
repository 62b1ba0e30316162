/**
 * Managing localnet processes from the CLI: whether one runs for a data directory, starting one in the
 * background, stopping it, wiping it, and starting one on demand for a command that needs it.
 */
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../../errors.js'
import {httpText} from '../../http/client.js'
import {packageRoot} from '../../package-root.js'
import {isAlive} from '../../process/alive.js'
import type {GenesisRecord} from '../state.js'
import type {LocalnetNodeEntry} from '../nodes/node-agent.js'
import {
  defaultGatewayHttpsPort,
  defaultGatewayPort,
  gatewayHttpsPortInUse,
  gatewayPortInUse,
  localnetFiles,
  localnetPortInUse,
} from '../paths.js'
import type {LocalnetMarketEntry, LocalnetRuntime} from './server.js'
import type {LocalnetIds} from '../../settings/kinds.js'

/** The members a running localnet publishes (server.ts), null while none runs. */
type Published = Pick<
  LocalnetRuntime,
  | 'rpcUrl'
  | 'wsUrl'
  | 'contentStoreUrl'
  | 'secretsUrl'
  | 'deploymentManager'
  | 'gatewayUrl'
  | 'gatewayHttpsUrl'
  | 'caCertificate'
  | 'frpServerAddress'
  | 'proxyUrl'
  | 'node'
  | 'startedAt'
>

/** What `localnet status` reports: what the running localnet publishes, and its chain's addresses. */
export type LocalnetStatus = {[K in keyof Published]: Published[K] | null} & {
  network: 'localnet'
  running: boolean
  pid: number | null
  /** Every node agent (`--nodes N`): address, idle or running, and the job it runs; empty when none runs. */
  nodes: LocalnetNodeEntry[]
  /** The localnet's markets, the default first: slug, address, name, nodes serving it now; empty when none runs. */
  markets: LocalnetMarketEntry[]
  programId: string | null
  market: string | null
  mint: string | null
  faucet: string | null
  /** Whose addresses its jobs program and mint have (`own`, `devnet`, `mainnet`); null before its first start. */
  ids: LocalnetIds | null
  dataDir: string
}

const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 15_000

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T
  } catch {
    return null
  }
}

/** The runtime record of the localnet serving this data directory, when its process is alive and answers. */
export async function runningLocalnet(dataDir: string): Promise<LocalnetRuntime | null> {
  const runtime = readJson<LocalnetRuntime>(localnetFiles(dataDir).runtime)
  if (!runtime || !isAlive(runtime.pid)) return null
  try {
    const res = await httpText(`${runtime.rpcUrl}/health`, {method: 'GET', signal: AbortSignal.timeout(2000)})
    return res.ok ? runtime : null
  } catch {
    return null
  }
}

/**
 * The status of the localnet of a data directory, running or not; `runtime`, when the caller just checked that
 * it answers (ensureLocalnet), saves asking it again.
 */
export async function localnetStatus(dataDir: string, runtime?: LocalnetRuntime | null): Promise<LocalnetStatus> {
  runtime ??= await runningLocalnet(dataDir)
  const genesis = readJson<GenesisRecord>(localnetFiles(dataDir).genesis)
  return {
    network: 'localnet',
    running: runtime !== null,
    pid: runtime?.pid ?? null,
    rpcUrl: runtime?.rpcUrl ?? null,
    wsUrl: runtime?.wsUrl ?? null,
    contentStoreUrl: runtime?.contentStoreUrl ?? null,
    secretsUrl: runtime?.secretsUrl ?? null,
    deploymentManager: runtime?.deploymentManager ?? null,
    gatewayUrl: runtime?.gatewayUrl ?? null,
    gatewayHttpsUrl: runtime?.gatewayHttpsUrl ?? null,
    caCertificate: runtime?.caCertificate ?? null,
    frpServerAddress: runtime?.frpServerAddress ?? null,
    proxyUrl: runtime?.proxyUrl ?? null,
    node: runtime?.node ?? null,
    nodes: runtime?.nodes ?? [],
    markets: runtime?.markets ?? [],
    programId: genesis?.programId ?? null,
    market: genesis?.market ?? null,
    mint: genesis?.mint ?? null,
    faucet: genesis?.faucet ?? null,
    ids: genesis ? (genesis.ids ?? 'own') : null,
    dataDir,
    startedAt: runtime?.startedAt ?? null,
  }
}

/** Starts a localnet as a background process and waits until it answers; `args` are more `localnet start` flags. */
export async function startInBackground(dataDir: string, port: number, args: string[] = []): Promise<LocalnetRuntime> {
  const files = localnetFiles(dataDir)
  const existing = await runningLocalnet(dataDir)
  if (existing) return existing
  // Checked here so a busy port is one clear error, not the background process's failure quoted from its log.
  if (port !== 0 && !((await portFree(port)) && (await portFree(port + 1)))) throw localnetPortInUse(port)
  // The gateway too: its failure would otherwise come back quoted from the log, under the RPC port's hint.
  if (!args.includes('--no-node')) {
    const given = args.indexOf('--gateway-port')
    const gateway = given === -1 ? defaultGatewayPort(port) : Number(args[given + 1])
    if (gateway !== 0 && !(await portFree(gateway))) throw gatewayPortInUse(gateway)
    const givenHttps = args.indexOf('--gateway-https-port')
    const https = givenHttps === -1 ? defaultGatewayHttpsPort(gateway) : Number(args[givenHttps + 1])
    if (https !== 0 && !(await portFree(https))) throw gatewayHttpsPortInUse(https)
  }
  mkdirSync(dataDir, {recursive: true})
  const log = openSync(files.log, 'w')
  // The CLI itself, in the foreground mode of `localnet start`: the one entry that exists however it was built.
  const cli = join(packageRoot(), 'bin', 'run.js')
  const child = spawn(
    process.execPath,
    [cli, 'localnet', 'start', '--data-dir', dataDir, '--port', String(port), ...args],
    {
      detached: true,
      stdio: ['ignore', log, log],
      env: process.env,
    },
  )
  closeSync(log)
  child.unref()
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    const runtime = await runningLocalnet(dataDir)
    if (runtime && runtime.pid === child.pid) return runtime
    if (gone) break
    await sleep(50)
  }
  if (!gone && child.pid) process.kill(child.pid, 'SIGKILL')
  throw new GpunetError('localnet_start_failed', `the localnet did not start: ${lastLines(files.log)}`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint: `See ${files.log}; another process may hold the port (choose one with --port).`,
  })
}

/**
 * The jobs the localnet's nodes run now (its runtime record follows them): those a stop ends, each recorded failed
 * (`interrupted`) at the next start, as docs/node.md says.
 */
export function runningLocalnetJobs(dataDir: string): string[] {
  const runtime = readJson<LocalnetRuntime>(localnetFiles(dataDir).runtime)
  if (!runtime || !isAlive(runtime.pid)) return []
  return (runtime.nodes ?? []).flatMap((node) => (node.state === 'running' && node.job ? [node.job] : []))
}

/** Stops the localnet of a data directory; returns the pid it stopped, or null when none ran. */
export async function stopLocalnet(dataDir: string): Promise<number | null> {
  const runtime = readJson<LocalnetRuntime>(localnetFiles(dataDir).runtime)
  if (!runtime || !isAlive(runtime.pid)) return null
  process.kill(runtime.pid, 'SIGTERM')
  const deadline = Date.now() + STOP_TIMEOUT_MS
  while (isAlive(runtime.pid)) {
    if (Date.now() > deadline) {
      // It saves its chain on SIGTERM; past the deadline the journal still holds every answered transaction.
      process.kill(runtime.pid, 'SIGKILL')
      break
    }
    await sleep(50)
  }
  rmSync(localnetFiles(dataDir).runtime, {force: true})
  return runtime.pid
}

/** Deletes a localnet's chain, content and keys (stopping it first); returns whether anything was there. */
export async function resetLocalnet(dataDir: string): Promise<boolean> {
  await stopLocalnet(dataDir)
  const files = Object.values(localnetFiles(dataDir))
  const existed = files.some((f) => existsSync(f))
  for (const file of files) rmSync(file, {recursive: true, force: true})
  return existed
}

/**
 * The localnet a command should talk to: the running one, or one started in the background now, which it
 * announces on stderr through `note`.
 */
export async function ensureLocalnet(
  dataDir: string,
  port: number,
  note: (line: string) => void,
): Promise<LocalnetRuntime> {
  const running = await runningLocalnet(dataDir)
  if (running) return running
  const runtime = await startInBackground(dataDir, port)
  note(
    `Started a localnet in the background at ${runtime.rpcUrl} (data in ${dataDir}); stop it with "gpunet localnet stop".`,
  )
  return runtime
}

/** True when nothing listens on 127.0.0.1:`port` (a listener is opened and closed at once). */
async function portFree(port: number): Promise<boolean> {
  const server = createServer()
  server.listen(port, '127.0.0.1')
  try {
    await once(server, 'listening')
  } catch {
    return false
  }
  await new Promise((resolve) => server.close(resolve))
  return true
}

function lastLines(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trim().split('\n')
    return lines.slice(-3).join(' / ') || 'it exited without output'
  } catch {
    return 'it exited without output'
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
