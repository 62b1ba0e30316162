import {readdir, readFile} from 'node:fs/promises'
import {basename, join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'
import {suggest} from './zod-issues.js'
import {packageRoot} from '../package-root.js'

/** The folder of job templates shipped with the package. */
export function templatesDir(): string {
  return join(packageRoot(), 'job-templates')
}

/** A job template: its name (the file name without `.json`), a one-line description and the file's path. */
export interface JobTemplate {
  name: string
  description: string
  file: string
}

/** Every template shipped in `job-templates/`, sorted by name. */
export async function listTemplates(): Promise<JobTemplate[]> {
  const dir = templatesDir()
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort()
  return Promise.all(
    files.map(async (f) => {
      const file = join(dir, f)
      const parsed = JSON.parse(await readFile(file, 'utf8')) as {meta?: {description?: unknown}}
      const description = typeof parsed.meta?.description === 'string' ? parsed.meta.description : ''
      return {name: basename(f, '.json'), description, file}
    }),
  )
}

/** Finds a template by name; an unknown name is a usage error that suggests the closest one. */
export async function findTemplate(name: string): Promise<JobTemplate> {
  const templates = await listTemplates()
  const found = templates.find((t) => t.name === name)
  if (found) return found
  const names = templates.map((t) => t.name)
  const close = suggest(name, names)
  throw new GpunetError('unknown_template', `there is no template named "${name}"`, {
    exitCode: ExitCode.USAGE,
    hint: close
      ? `did you mean "${close}"? Run \`gpunet job init\` to list them all.`
      : `templates: ${names.join(', ')}`,
  })
}
