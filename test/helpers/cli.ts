import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The built CLI entry; `npm test` builds first, so tests run what users run. */
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `gpunet ARGS` in a child process and collects stdout, stderr and the exit code separately. */
export function runCli(
  args: string[],
  options: {stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string} = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: {...process.env, NO_COLOR: '1', ...options.env},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
    child.stdin.end(options.stdin ?? '')
  })
}

/** How a shell pipeline ended, and how long it went on after its first output (`| head -1` printing its line). */
export interface PipelineResult extends CliResult {
  /** From the first byte on stdout to the pipeline's end: the time gpunet lingers after `head` left. */
  lingeredMs: number
}

/**
 * Runs a shell pipeline under bash's pipefail (its exit code is gpunet's unless gpunet exited 0); `gpunet` in the
 * script is the built CLI. It ends once every process of it ended, gpunet included; after `limitMs` its processes
 * are killed (a follower that never ends fails its test in time, and leaves nothing running).
 */
export function runPipeline(script: string, env: NodeJS.ProcessEnv = {}, limitMs = 30_000): Promise<PipelineResult> {
  return new Promise((resolve, reject) => {
    const gpunet = `gpunet() { "${process.execPath}" "${BIN}" "$@"; }; `
    const child = spawn('bash', ['-o', 'pipefail', '-c', gpunet + script], {
      env: {...process.env, NO_COLOR: '1', ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: the limit ends every process of the pipeline, not bash alone.
      detached: true,
    })
    const limit = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }, limitMs)
    child.on('close', () => clearTimeout(limit))
    let stdout = ''
    let stderr = ''
    let firstOutputAt: number | undefined
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      firstOutputAt ??= Date.now()
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr, lingeredMs: Date.now() - (firstOutputAt ?? Date.now())}))
  })
}

/**
 * Runs `gpunet ARGS` in `dir` as a user of the manager at `managerUrl` would: the wallet `dir/wallet.json`, the
 * config and the localnet's data in `dir`, so nothing of the machine's own is read.
 */
export function runManagerCli(args: string[], dir: string, managerUrl: string): Promise<CliResult> {
  return runCli(args, {
    env: {
      GPUNET_WALLET: join(dir, 'wallet.json'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
      GPUNET_MANAGER_URL: managerUrl,
    },
    cwd: dir,
  })
}
