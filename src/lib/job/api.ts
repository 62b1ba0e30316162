/**
 * gpunet's programmatic API for posting and following jobs: connect once, then post, read, wait for, stop and extend
 * jobs, with the same checks, settings and errors (GpunetError with an exit code) as the CLI. The library asks
 * before spending only when given a `confirm` callback: otherwise calling `postJob` or `extendJob` is the consent.
 */
import {NETWORK_REFUSALS, prepareUpload} from '../definition/network-form/prepare.js'
import type {JobDefinition} from '../definition/schema.js'
import {ExitCode, GpunetError} from '../errors.js'
import {closeHttpAgents} from '../http/client.js'
import {defaultWaitPoint, followJob} from './follow.js'
import type {WaitPoint} from './wait-point.js'
import type {Network} from '../network.js'
import {resolveSettings, type Settings} from '../settings/settings.js'
import {openWallet, type Wallet, walletFromBytes} from '../keys/wallet.js'
import {type AmountJson, amountJson} from '../text/amounts.js'
import {type MarketNetwork, parseAddress} from '../market/connect.js'
import {connectMarket} from '../network-connection.js'
import {fetchDefinition} from '../market/jobs/definition.js'
import {bytesToIpfsHash} from '../market/codec/ipfs-hash.js'
import {jobInfo, type JobInfo} from '../market/jobs/job-info.js'
import {readJob} from '../market/jobs/jobs.js'
import {
  extendJob as sendExtend,
  extendReport,
  type ExtendReport,
  quoteExtend,
  readOwnJob,
  stopJob as sendStop,
} from '../market/jobs/manage.js'
import {TOKEN_DECIMALS} from '../market/networks.js'
import {type FeeJson, feeJson} from '../market/rpc/send.js'
import type {Progress} from '../terminal/progress.js'
import {cancelled} from '../terminal/prompt.js'
import {checkAndQuote, listChecked, type PostOptions, type PostSpend} from './posting.js'
import type {NeedInput} from './placing.js'
import type {Placement} from '../market/jobs/placement.js'

/** Where and as whom to work; every field falls back to the CLI's settings (flags' environment variables, config). */
export interface ConnectNetworkOptions {
  /** `localnet` (default: started in the background when none runs), `devnet` or `mainnet`. */
  network?: Network
  /** The Solana JSON-RPC URL (default: GPUNET_RPC_URL, the config file, then the network's public node). */
  rpcUrl?: string
  /** A keypair file (Solana CLI format) or the 64 bytes of a secret key (default: GPUNET_WALLET, then the CLI's). */
  wallet?: string | Uint8Array
  /** The host of exposed services on devnet and mainnet (default: GPUNET_NETWORK_HOST). */
  networkHost?: string
  /** Pay a priority fee (default: on mainnet only). */
  priorityFee?: boolean
  /** The most SOL one transaction pays as priority fee (default 0.001). */
  maxPriorityFee?: string
  /** Told what happens on the way (a localnet started, a wallet created); silent by default. */
  onNote?: (line: string) => void
  /** Where settings are read (default: process.env). */
  env?: NodeJS.ProcessEnv
}

/** A connection to one network: what postJob and the others take. */
export interface GpunetNetwork {
  readonly network: Network
  readonly rpcUrl: string
  /** The market jobs go to unless `postJob` names another. */
  readonly defaultMarket: string
  /** The wallet's address (loaded on first use when not given). */
  walletAddress(): Promise<string>
  /** Closes pooled HTTP connections, so a script exits at once. */
  close(): Promise<void>
}

interface Connected extends GpunetNetwork {
  readonly net: MarketNetwork
  readonly settings: Settings
  readonly note: (line: string) => void
  wallet(): Promise<Wallet>
}

/** Connects to a network: resolves its settings, opens its RPC connection (starting the localnet when needed). */
export async function connectNetwork(options: ConnectNetworkOptions = {}): Promise<GpunetNetwork> {
  const network = options.network ?? 'localnet'
  const note = options.onNote ?? (() => {})
  const given = options.wallet
  // The options are this program's flags; the network is the one asked for (no GPUNET_NETWORK or profile picks it).
  const settings = resolveSettings({
    network,
    flags: {
      rpcUrl: options.rpcUrl,
      networkHost: options.networkHost,
      priorityFee: options.priorityFee === undefined ? undefined : String(options.priorityFee),
      maxPriorityFee: options.maxPriorityFee,
      wallet: typeof given === 'string' ? given : undefined,
    },
    env: options.env,
  })
  const net = await connectMarket(settings, note)
  let wallet: Promise<Wallet> | undefined
  const connected: Connected = {
    network,
    rpcUrl: net.rpcUrl,
    defaultMarket: net.defaultMarket.toBase58(),
    net,
    settings,
    note,
    wallet: () =>
      (wallet ??= given instanceof Uint8Array ? Promise.resolve(walletFromBytes(given)) : openWallet(settings, {note})),
    walletAddress: async () => (await connected.wallet()).address,
    close: closeHttpAgents,
  }
  return connected
}

export interface PostJobOptions {
  /** The market's address (default: the network's default market). */
  market?: string
  /** Seconds the job may run (default: the market's job timeout); the deposit is price x timeout. */
  timeout?: number
  /**
   * Check that every `%%secrets.NAME%%` the job refers to is stored in the wallet's store before paying (default:
   * true; exit 3 naming the missing ones). False posts without asking the secrets service, as `--no-secrets-check`.
   */
  secretsCheck?: boolean
  /**
   * On localnet, post a job that no localnet node would run (its node is off, or has no GPU for a GPU job), as
   * `--queue-anyway`: it stays QUEUED, and the reason is in `warnings`. Default false: refused with exit 5.
   */
  queueAnyway?: boolean
  /**
   * Asked once every check passed and the job is priced, before anything is uploaded or sent: false cancels
   * (exit 130, `cancelled`). Without it, calling postJob is the consent.
   */
  confirm?: (spend: PostSpend) => boolean | Promise<boolean>
  /**
   * What the job needs of a market, as `--gpu-model`, `--min-vram`, `--max-price`, `--market-type` and `--strict`
   * (docs/jobs.md, "Placement"): without `market`, the market that fits is chosen (exit 3 when none does); with it,
   * it is checked. The definition's `required_vram` counts too.
   */
  need?: NeedInput
}

export type {PostSpend} from './posting.js'

/** A job just posted. */
export interface PostedJob {
  network: Network
  job: string
  /** The definition's CIDv0. */
  definition: string
  market: string
  timeout: number
  pricePerSecond: AmountJson
  /** The deposit: price per second x timeout. */
  totalPrice: AmountJson
  signature: string
  fee: FeeJson
  /** What the poster should know: a job posted with `queueAnyway` that no localnet node would run. */
  warnings: string[]
  /** How placement chose the market, when it ran (a need and no `market`). */
  placement?: Placement
}

/**
 * Posts a job as `gpunet job post` does: validates the definition and puts it in the network's form, checked by the
 * network's validator (exit 3 with every error); checks that on localnet a node would run it (exit 5) and that the
 * secrets it refers to are stored (exit 3); prices it, checks the wallet pays deposit, rent and fee (exit 4), asks
 * `confirm` when given, uploads it (its CID checked) and sends `list` once.
 */
export async function postJob(
  network: GpunetNetwork,
  definition: JobDefinition | unknown,
  options: PostJobOptions = {},
): Promise<PostedJob> {
  const {net, wallet, settings, note} = connected(network)
  const prepared = await prepareUpload(definition, net.name)
  if (!prepared.ok) {
    const lines = prepared.issues.map((e) => `  ${e.path || '(document)'}: ${e.message}`)
    const code = prepared.issues.find((e) => e.code !== 'invalid')?.code
    const refused = code !== undefined && NETWORK_REFUSALS.has(code)
    throw new GpunetError(
      refused ? code : 'invalid_definition',
      `${refused ? `not a job ${net.name}'s nodes run` : 'not a valid job definition'}:\n${lines.join('\n')}`,
      {
        exitCode: ExitCode.INVALID_INPUT,
        hint: 'validateJobDefinition(value) lists the errors; nothing was uploaded or sent',
      },
    )
  }
  const {upload} = prepared
  const {confirm} = options
  const steps: PostOptions = {
    ...options,
    // An empty address is no market named, as before the workflow was shared.
    market: options.market ? parseAddress(options.market, 'the market') : undefined,
    confirm: confirm
      ? async (spend) => {
          if (!(await confirm(spend))) throw cancelled('Cancelled: nothing was uploaded or sent.')
        }
      : undefined,
    note,
    progress: (text) => noteProgress(text, note),
  }
  const checked = await checkAndQuote(settings, net, await wallet(), upload, steps)
  const posted = await listChecked(net, upload, checked, steps)
  const {quote} = checked
  return {
    network: net.name,
    job: posted.job.toBase58(),
    definition: quote.cid,
    market: quote.market.toBase58(),
    timeout: Number(quote.timeout),
    pricePerSecond: amountJson(quote.pricePerSecond, TOKEN_DECIMALS, 'token'),
    totalPrice: amountJson(quote.total, TOKEN_DECIMALS, 'token'),
    signature: posted.signature,
    fee: feeJson(posted.fee),
    warnings: checked.warnings,
    ...(checked.placement ? {placement: checked.placement} : {}),
  }
}

/** The upload and the transaction under way, told to `onNote` a step a line: a library draws no spinner. */
function noteProgress(text: string, note: (line: string) => void): Progress {
  note(text)
  return {update: note, print: note, stop: () => {}}
}

export type {JobInfo} from '../market/jobs/job-info.js'

/** Reads a job (exit 7 when the address holds none). */
export async function getJob(network: GpunetNetwork, job: string): Promise<JobInfo> {
  const {net} = connected(network)
  const view = await readJob(net.connection, net.programId, parseAddress(job, 'the job'))
  return jobInfo(net, view, await fetchDefinition(net, bytesToIpfsHash(view.job.ipfsJob), () => {}))
}

export interface WaitOptions {
  /**
   * `running`: until a node runs it; `ready`: until its exposed services answer their health checks (the default
   * for a job that exposes ports); `done`: until COMPLETED or STOPPED (the default otherwise). A job that ends
   * stops any wait.
   */
  until?: WaitPoint
  /** Seconds before giving up with exit 124 (default 1800). */
  timeoutSeconds?: number
  /** Told each new thing seen: a status, then what the service answers. */
  onProgress?: (line: string) => void
  /** Stops following (exit 130); the job goes on. */
  signal?: AbortSignal
}

/** Follows a job until it runs, its services are ready or it ends; returns it as getJob does. */
export async function waitForJob(network: GpunetNetwork, job: string, options: WaitOptions = {}): Promise<JobInfo> {
  const {net} = connected(network)
  const address = parseAddress(job, 'the job')
  const first = await readJob(net.connection, net.programId, address)
  const definition = await fetchDefinition(net, bytesToIpfsHash(first.job.ipfsJob), () => {})
  const view = await followJob(net, address, {
    until: options.until ?? defaultWaitPoint(definition),
    timeoutSeconds: options.timeoutSeconds ?? 1800,
    definition,
    progress: options.onProgress ?? (() => {}),
    signal: options.signal,
  })
  return jobInfo(net, view, definition)
}

/** Stops a job of this wallet: `delist` when queued (deposit back), `end` when running (the node paid its time). */
export async function stopJob(
  network: GpunetNetwork,
  job: string,
): Promise<{job: string; action: 'delist' | 'end'; signature: string; fee: FeeJson}> {
  const {net, wallet} = connected(network)
  const signer = await wallet()
  const view = await readOwnJob(net, signer, parseAddress(job, 'the job'))
  const {action, signature, fee} = await sendStop(net, signer, view)
  return {job, action, signature, fee: feeJson(fee)}
}

/** Raises a job's timeout to `timeout` seconds in all, paying price x the difference (exit 4 when it cannot). */
export async function extendJob(network: GpunetNetwork, job: string, timeout: number): Promise<ExtendReport> {
  const {net, wallet} = connected(network)
  const signer = await wallet()
  const view = await readOwnJob(net, signer, parseAddress(job, 'the job'))
  const quote = await quoteExtend(net, signer, view, BigInt(timeout))
  return extendReport(job, quote, await sendExtend(net, quote))
}

function connected(network: GpunetNetwork): Connected {
  if (!('net' in network)) throw new TypeError('pass the object connectNetwork() returned')
  return network as Connected
}
