import {execute} from '@oclif/core/execute'

/** Hands the command line to oclif; `dir` is a file inside the package, from which oclif finds its root. */
export async function runOclif(dir: string): Promise<void> {
  await execute({dir})
}
