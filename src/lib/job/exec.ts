/**
 * `job exec` and `job shell`: a command inside a running job's operation through its node's `/exec` (gpunet's own
 * route: the localnet's nodes serve it, the network's nodes do not), or a shell through the network's `/terminal`.
 * Finds the job's node, checks the wallet is the poster, signs a header for the action `exec` (or a terminal
 * grant), and carries the caller's streams until the command exits.
 */
import {ExitCode, GpunetError} from '../errors.js'
import {openExec, openTerminal, type ExecEnd, type ExecSession} from '../node-api/exec-client.js'
import {CLOSE, signHeader} from '../node-api/protocol.js'
import {signTerminalGrant} from '../node-api/terminal-protocol.js'
import type {WalletKey} from '../keys/wallet-key.js'
import {type JobNodeSource, runningJobNode} from './node-access.js'

/** Input bytes waiting to be sent before stdin is paused. */
const STDIN_BACKLOG_BYTES = 1024 * 1024

export interface JobExecOptions {
  /** `exec`: gpunet's `/exec` (a command, streams apart); `terminal`: the network's `/terminal` (a shell). */
  route?: 'exec' | 'terminal'
  op?: string
  cmd: string[]
  tty: boolean
  cols?: number
  rows?: number
  wallet: () => Promise<WalletKey>
  /** Where input comes from; its end ends the command's stdin (or, on a terminal, Ctrl+D does). */
  input: NodeJS.ReadableStream & {pause(): unknown; resume(): unknown}
  output: (stream: 'stdout' | 'stderr', data: Buffer) => void
  /** Called with the session once it is open (a shell passes window resizes on). */
  opened?: (session: ExecSession) => void
}

/** Runs the command in the job (a base58 address) and resolves with its exit code; throws when it could not run. */
export async function execInJob(source: JobNodeSource, job: string, options: JobExecOptions): Promise<number> {
  const target = await runningJobNode(source, job, options.wallet, 'run commands')
  const {job: address, node, apiUrl: base, wallet, network} = target
  const size = options.cols && options.rows ? {cols: options.cols, rows: options.rows} : {}
  let session: ExecSession
  if (options.route === 'terminal') {
    const scope = {job: address, node, network, ...(options.op === undefined ? {} : {op: options.op})}
    const grant = signTerminalGrant((m) => wallet.sign(m), scope)
    session = openTerminal(
      base,
      {jobAddress: address, ...grant, ...size, ...(options.op ? {op: options.op} : {})},
      options.output,
    )
  } else {
    const header = signHeader((m) => wallet.sign(m), {action: 'exec', node, job: address})
    const body = {
      jobAddress: address,
      cmd: options.cmd,
      tty: options.tty,
      ...(options.op === undefined ? {} : {opId: options.op}),
      ...size,
    }
    session = openExec(base, {header, body}, options.output)
  }
  options.opened?.(session)
  const {input} = options
  const onData = (chunk: Buffer | string) => {
    session.stdin(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
    if (session.buffered() <= STDIN_BACKLOG_BYTES) return
    input.pause()
    const wait = setInterval(() => {
      if (session.buffered() > STDIN_BACKLOG_BYTES / 2) return
      clearInterval(wait)
      input.resume()
    }, 20)
  }
  const onEnd = () => session.stdinEnd()
  input.on('data', onData)
  input.on('end', onEnd)
  let end: ExecEnd
  try {
    end = await session.ended
  } finally {
    input.off('data', onData)
    input.off('end', onEnd)
    input.pause()
  }
  if (end.exitCode !== null) return end.exitCode
  // A shell the node saw end without a code (a signal ended it): a failure, as a shell reports one.
  if (end.exited) return 1
  throw refusal(end, address, network, options.route ?? 'exec')
}

/** The error of a session that ended without the command's exit code. */
function refusal(end: ExecEnd, job: string, network: string, route: 'exec' | 'terminal'): GpunetError {
  const why = end.error ?? (`${end.code} ${end.reason}`.trim() || 'the connection closed')
  if (end.code === CLOSE.UNAUTHORIZED) {
    return new GpunetError('node_api_refused', `the node API refused the command: ${end.reason}`, {
      exitCode: ExitCode.DENIED,
      hint: "the node checks the job poster's signature: use the wallet that posted the job (--wallet)",
    })
  }
  if (end.code === CLOSE.INVALID_PATH) {
    return new GpunetError(
      'exec_unsupported',
      `this node offers no ${route === 'exec' ? 'command' : 'terminal'} route (${why})`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        hint:
          route === 'terminal' || network === 'localnet'
            ? undefined
            : "`job exec` reaches the localnet's nodes only; the network's nodes serve a terminal: `gpunet job shell` (docs/exec.md)",
      },
    )
  }
  if (end.code === CLOSE.UNKNOWN_JOB || end.code === CLOSE.INVALID_BODY) {
    return new GpunetError('exec_refused', `the node cannot run the command in job ${job}: ${end.reason}`, {
      exitCode: ExitCode.NOT_FOUND,
    })
  }
  return new GpunetError('exec_failed', `the command's session with the node ended without an exit code: ${why}`, {
    exitCode: ExitCode.UNAVAILABLE,
  })
}
