import {spawn} from 'node:child_process'
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
