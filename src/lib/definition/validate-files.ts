import {ExitCode} from '../errors.js'
import type {Network} from '../network.js'
import {checkDefinitionFile, type FileReport} from './check.js'
import {fileCheckLines, type Paint} from './report-text.js'

/** How `gpunet job validate` runs: its flags, and where its human report goes (nowhere under `--json`). */
export interface ValidateFilesOptions {
  strict: boolean
  /** Also check each job as it would be uploaded to this network: its nodes' verdict decides. */
  network?: Network
  frames: boolean
  /** Writes one line of the human report; not called under `--json`. */
  say?: (line: string) => void
  paint: Paint
  readStdin: () => Promise<Uint8Array | string>
}

/** The `--json` document of `gpunet job validate`. */
export interface ValidateFilesDocument {
  valid: boolean
  files: FileReport[]
}

/**
 * What `gpunet job validate` does once its command line is parsed, whether oclif parsed it or the start-up path
 * that serves plain invocations without oclif (src/cli/fast-start.ts): checks every file, writes the human report, and
 * returns the JSON document with the exit code (3 when any file is invalid).
 */
export async function validateFiles(
  files: string[],
  options: ValidateFilesOptions,
): Promise<{document: ValidateFilesDocument; exitCode: number}> {
  const reports: FileReport[] = []
  for (const file of files) {
    const check = await checkDefinitionFile(file, options.readStdin, {strict: options.strict, network: options.network})
    reports.push(check.report)
    if (options.say) for (const line of fileCheckLines(check, options.frames, options.paint)) options.say(line)
  }
  const valid = reports.every((r) => r.valid)
  return {document: {valid, files: reports}, exitCode: valid ? ExitCode.OK : ExitCode.INVALID_INPUT}
}
