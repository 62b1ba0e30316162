/**
 * A one-off job from a command line (`gpunet job run`): one `container/run` operation, written in the spec's 0.1
 * format so that it goes through every check a definition file does, and can be saved as the start of one.
 */
import {ExitCode, GpunetError} from '../errors.js'
import type {JobDefinition} from './schema.js'

/** The image a one-off job runs when `--image` is not given: a small, common image with bash. */
export const DEFAULT_RUN_IMAGE = 'docker.io/library/ubuntu:24.04'

/** The id of a one-off job's only operation. */
export const RUN_OPERATION_ID = 'run'

export interface OneOffOptions {
  image?: string
  /** The command words, kept as an array so that the caller's quoting survives; empty runs the image's own. */
  command: string[]
  gpu?: boolean
  /** `KEY=VALUE` pairs from `--env`. */
  env?: string[]
  expose?: number[]
}

/** The definition of a one-off job; an empty `--image` or a malformed `--env` is a usage error (exit 2). */
export function oneOffDefinition(options: OneOffOptions): JobDefinition {
  if (options.image !== undefined && options.image.trim() === '') {
    throw new GpunetError('image_invalid', '--image is empty', {
      exitCode: ExitCode.USAGE,
      hint: `name an image, such as ${DEFAULT_RUN_IMAGE}, or leave --image out for that one`,
    })
  }
  const args: Record<string, unknown> = {image: options.image ?? DEFAULT_RUN_IMAGE}
  if (options.command.length > 0) args.cmd = [...options.command]
  if (options.gpu) args.gpu = true
  const env = parseEnvPairs(options.env ?? [])
  if (Object.keys(env).length > 0) args.env = env
  const expose = options.expose ?? []
  if (expose.length === 1) args.expose = expose[0]
  else if (expose.length > 1) args.expose = expose.map((port) => ({port}))
  return {
    version: '0.1',
    type: 'container',
    meta: {trigger: 'cli'},
    ops: [{id: RUN_OPERATION_ID, type: 'container/run', args}],
  } as JobDefinition
}

/**
 * `KEY=VALUE` pairs as an env object (the value may hold `=`). A bare `KEY` is refused rather than copied from this
 * machine's environment as docker does: the definition is public, and a copied value could be a credential.
 */
export function parseEnvPairs(pairs: string[]): Record<string, string> {
  // A Map, then fromEntries: a key such as __proto__ becomes an own member instead of touching the prototype.
  const env = new Map<string, string>()
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) {
      throw new GpunetError('env_invalid', `--env "${pair}" is not KEY=VALUE`, {
        exitCode: ExitCode.USAGE,
        hint: 'write --env KEY=VALUE; for a credential, store it (`gpunet secrets set NAME`) and pass --env KEY=%%secrets.NAME%%',
      })
    }
    const key = pair.slice(0, at)
    if (env.has(key)) {
      throw new GpunetError('env_invalid', `--env ${key} is given twice`, {exitCode: ExitCode.USAGE})
    }
    env.set(key, pair.slice(at + 1))
  }
  return Object.fromEntries(env)
}
