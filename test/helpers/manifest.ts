/** The manifest's entries of the source commands, made by oclif's own `cacheCommand` (what `oclif manifest` runs). */
import {readdirSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join, relative} from 'node:path'
import {pathToFileURL} from 'node:url'

import type {ManifestCommand} from '../../src/lib/mcp/catalog.js'

const ROOT = join(import.meta.dirname, '..', '..')
const COMMANDS = join(ROOT, 'src', 'commands')

type CacheCommand = (command: unknown) => Promise<ManifestCommand>
const {cacheCommand} = createRequire(import.meta.url)(
  join(ROOT, 'node_modules/@oclif/core/lib/util/cache-command.js'),
) as {cacheCommand: CacheCommand}

function commandFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) =>
    entry.isDirectory()
      ? commandFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

/** The manifest's entries of every command, as `oclif manifest` makes them. */
export async function manifestCommands(): Promise<ManifestCommand[]> {
  const out: ManifestCommand[] = []
  for (const file of commandFiles(COMMANDS)) {
    const id = relative(COMMANDS, file).replace(/\.ts$/, '').split('/').join(':')
    const command = ((await import(pathToFileURL(file).href)) as {default: {id?: string}}).default
    command.id = id
    out.push(await cacheCommand(command))
  }
  return out
}
