/**
 * The network of the commands that run in a job on its node (`job exec`, `job shell`), and `job exec` itself. On localnet it is read from
 * the running localnet's files (started in the background when none runs, as connectMarket does) without loading
 * web3.js, so that `job exec` runs this same code when it is answered before oclif loads (src/fast-start.ts); on
 * other networks connectMarket (network-connection.ts) resolves it.
 */
import {parseAddressText} from './base58-text.js'
import {execInJob} from './job/exec.js'
import {type JobNodeSource} from './job/node-access.js'
import {ensureLocalnet, localnetStatus} from './localnet/control.js'
import {defaultDataDir, defaultPort} from './localnet/paths.js'
import {localnetNodeApiUrl, localnetRpcUrl} from './market/settings.js'
import type {Network} from './network.js'
import {loadWalletKey} from './wallet-key.js'

export interface JobNodeConnectOptions {
  network: Network
  rpc?: string
  networkHost?: string
  /** Where to say that a localnet was started in the background (stderr in commands). */
  note: (line: string) => void
  env?: NodeJS.ProcessEnv
}

/** Resolves the network a job's node is reached on (see the module's comment). */
export async function connectJobNode(options: JobNodeConnectOptions): Promise<JobNodeSource> {
  if (options.network !== 'localnet') {
    const [{connectMarket}, {jobNodeSource}] = await Promise.all([
      import('./network-connection.js'),
      import('./job/node-access.js'),
    ])
    return jobNodeSource(await connectMarket(options))
  }
  const env = options.env ?? process.env
  const dataDir = defaultDataDir(env)
  const runtime = await ensureLocalnet(dataDir, defaultPort(env), options.note)
  const {programId} = await localnetStatus(dataDir, runtime)
  if (!programId) throw new Error(`the localnet in ${dataDir} has no genesis record`)
  return {
    name: 'localnet',
    rpcUrl: localnetRpcUrl(runtime.rpcUrl, options.rpc, env),
    programId,
    nodeApiUrl: (node) => localnetNodeApiUrl(node, runtime.gatewayUrl ?? null, env),
  }
}

/** `gpunet job exec` with its command line parsed (by oclif, or by src/fast-start.ts before oclif loads). */
export interface JobExecRequest {
  job: string
  op?: string
  cmd: string[]
  network: Network
  rpc?: string
  networkHost?: string
  wallet?: string
  note: (line: string) => void
}

/** Runs `job exec` on the process's own stdin, stdout and stderr, and resolves with the command's exit code. */
export async function runJobExec(request: JobExecRequest): Promise<number> {
  const job = parseAddressText(request.job, 'the job')
  const source = await connectJobNode(request)
  return execInJob(source, job, {
    op: request.op,
    cmd: request.cmd,
    tty: false,
    wallet: () => loadWalletKey({path: request.wallet}),
    input: process.stdin,
    output: (stream, data) => (stream === 'stdout' ? process.stdout : process.stderr).write(data),
  })
}
