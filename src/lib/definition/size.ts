import {ExitCode, GpunetError} from '../errors.js'

/**
 * The largest job definition, in bytes, that `job post` uploads and a secrets service reads for a job login. The
 * network publishes no limit of its own; 1 MiB is far above any real definition and bounds what a login can make a
 * service read.
 */
export const MAX_DEFINITION_BYTES = 1024 * 1024

/** Refuses (exit 3) a definition whose posted bytes pass the limit, before anything is uploaded or paid. */
export function checkDefinitionSize(bytes: Uint8Array): void {
  if (bytes.byteLength <= MAX_DEFINITION_BYTES) return
  throw new GpunetError(
    'definition_too_large',
    `the job definition is ${bytes.byteLength} bytes as posted; the limit is ${MAX_DEFINITION_BYTES} bytes (1 MiB)`,
    {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'a node could not get the secrets of a larger job: move large data out of the definition (a resource, an image); nothing was uploaded or sent',
    },
  )
}
