import {spawn} from 'node:child_process'
import {resolve} from 'node:path'

const ROOT = resolve(import.meta.dirname, '..', '..')

/**
 * Runs an ES module's source (TypeScript imports allowed, relative to the project root) in a child process and
 * kills it after `limitMs`: for a test whose subject could hang the process it runs in. No timing is asserted;
 * the limit only stops a hang far beyond what the work needs.
 */
export async function runWithWatchdog(source: string, limitMs = 30_000): Promise<{stdout: string; killed: boolean}> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {cwd: ROOT})
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.resume()
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    child.kill('SIGKILL')
  }, limitMs)
  await new Promise((done) => child.on('close', done))
  clearTimeout(timer)
  return {stdout, killed}
}
