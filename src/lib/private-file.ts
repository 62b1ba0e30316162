import {randomBytes} from 'node:crypto'
import {chmod, mkdir, rename, writeFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'

/** The folder of gpunet's own files (wallet, token cache): `$XDG_CONFIG_HOME/gpunet` or `~/.config/gpunet`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME ?? env.USERPROFILE ?? '.'
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'gpunet')
}

/** The folder of gpunet's data (e.g. the secrets database): `$XDG_DATA_HOME/gpunet` or `~/.local/share/gpunet`. */
export function dataDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME ?? env.USERPROFILE ?? '.'
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'gpunet')
}

/**
 * Writes a file readable by its owner only (0600), in a 0700 folder. The content goes to a temporary file that
 * is renamed over the target, so a reader never sees half a key and a crash never leaves a truncated one.
 */
export async function writePrivateFile(file: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(file), {recursive: true, mode: 0o700})
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  await writeFile(temporary, content, {mode: 0o600})
  // The mode given to writeFile is filtered by the umask; chmod makes 0600 exact.
  await chmod(temporary, 0o600)
  await rename(temporary, file)
}
