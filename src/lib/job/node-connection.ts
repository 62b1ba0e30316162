/**
 * The network of the commands that run in a job on its node (`job exec`, `job shell`), and `job exec` itself. They
 * take the command's settings as resolved once (settings.ts). On localnet the network is read from the running
 * localnet's files (started in the background when none runs, as connectMarket does) without loading web3.js, so
 * that `job exec` runs this same code when it is answered before oclif loads (src/cli/fast-start.ts); on other networks
 * connectMarket (network-connection.ts) resolves it.
 */
import {parseAddressText} from '../text/base58-text.js'
import {execInJob} from './exec.js'
import {type JobNodeSource} from './node-access.js'
import {ensureLocalnet, localnetStatus} from '../localnet/server/control.js'
import {nodeApiUrl} from '../node-api/protocol.js'
import type {Settings} from '../settings/settings.js'
import {openWalletKey} from '../keys/wallet-key.js'

/** Resolves the network a job's node is reached on (see the module's comment). */
export async function connectJobNode(settings: Settings, note: (line: string) => void): Promise<JobNodeSource> {
  if (settings.network !== 'localnet') {
    const [{connectMarket}, {jobNodeSource}] = await Promise.all([
      import('../network-connection.js'),
      import('./node-access.js'),
    ])
    return jobNodeSource(await connectMarket(settings, note))
  }
  const {dataDir, port} = settings.localnet
  const runtime = await ensureLocalnet(dataDir, port, note)
  const {programId} = await localnetStatus(dataDir, runtime)
  if (!programId) throw new Error(`the localnet in ${dataDir} has no genesis record`)
  // As connectMarket's localnet (market/connect.ts): the settings first, then what the running localnet serves.
  const template = settings.typed('nodeApiUrl')?.value
  return {
    name: 'localnet',
    rpcUrl: settings.typed('rpcUrl')?.value ?? runtime.rpcUrl,
    programId,
    nodeApiUrl: (node) => nodeApiUrl(node, {template, gatewayUrl: runtime.gatewayUrl ?? null}),
  }
}

/** `gpunet job exec` with its command line parsed (by oclif, or by src/cli/fast-start.ts before oclif loads). */
export interface JobExecRequest {
  job: string
  op?: string
  cmd: string[]
  /** The command's settings, resolved once from its flags (settings.ts). */
  settings: Settings
  /** Where to say that a localnet was started in the background (stderr in commands). */
  note: (line: string) => void
}

/** Runs `job exec` on the process's own stdin, stdout and stderr, and resolves with the command's exit code. */
export async function runJobExec(request: JobExecRequest): Promise<number> {
  const job = parseAddressText(request.job, 'the job')
  const source = await connectJobNode(request.settings, request.note)
  return execInJob(source, job, {
    op: request.op,
    cmd: request.cmd,
    tty: false,
    wallet: () => openWalletKey(request.settings),
    input: process.stdin,
    output: (stream, data) => (stream === 'stdout' ? process.stdout : process.stderr).write(data),
  })
}
