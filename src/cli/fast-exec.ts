// `gpunet job exec` in its plain form (src/cli/fast-start.ts parses it): what its oclif command does after parsing,
// with the same library code and the same settings resolver. Loaded on Node 20 from a bundle of its own with a
// code cache (src/cli/code-cache.ts), since compiling its code (undici, ws) from source at each start costs more than
// oclif does from its cache.
import {runJobExec} from '../lib/job/node-connection.js'
import {SETTING_KEYS, SETTINGS, type SettingKey} from '../lib/settings/catalog.js'
import {resolveSettings} from '../lib/settings/settings.js'

/** The parsed plain form of `job exec`: its flags by name (without the dashes), its job and its command. */
export interface PlainExec {
  job: string
  flags: Record<string, string>
  cmd: string[]
}

/**
 * Runs a plain `job exec` and resolves with the command's exit code; throws what the oclif command would. Resolves
 * with undefined, having done nothing, when its settings (a profile's) choose a network other than the localnet:
 * only oclif's path serves those.
 */
export async function runPlainExec({job, flags, cmd}: PlainExec): Promise<number | undefined> {
  const note = (line: string) => process.stderr.write(`${line}\n`)
  // BaseCommand's parse: the setting flags, by the flag each setting names, and the profile, resolved once.
  const values: Partial<Record<SettingKey, string>> = {}
  for (const key of SETTING_KEYS) {
    const flag = (SETTINGS[key] as {flag?: string}).flag
    const value = flag === undefined ? undefined : flags[flag.slice(2)]
    if (value !== undefined) values[key] = value
  }
  const announced: string[] = []
  const settings = resolveSettings({
    flags: values,
    profile: flags.profile,
    env: process.env,
    announce: (line) => announced.push(line),
  })
  if (settings.network !== 'localnet') return undefined
  for (const line of announced) note(line)
  return runJobExec({job, op: flags.op, cmd, settings, note})
}
