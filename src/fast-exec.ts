// `gpunet job exec` in its plain form (src/fast-start.ts parses it): what its oclif command does after parsing,
// with the same library code. Loaded on Node 20 from a bundle of its own with a code cache (src/code-cache.ts),
// since compiling its code (undici, ws) from source at each start costs more than oclif does from its cache.
import {runJobExec} from './lib/job-node-connection.js'
import {resolveNetwork} from './lib/network.js'

/** The parsed plain form of `job exec`: its flags by name (without the dashes), its job and its command. */
export interface PlainExec {
  job: string
  flags: Record<string, string>
  cmd: string[]
}

/** Runs a plain `job exec` and resolves with the command's exit code; throws what the oclif command would. */
export async function runPlainExec({job, flags, cmd}: PlainExec): Promise<number> {
  const note = (line: string) => process.stderr.write(`${line}\n`)
  // BaseCommand's parse: --profile becomes GPUNET_PROFILE, and --network (or GPUNET_NETWORK) is settled with it.
  if (flags.profile) process.env.GPUNET_PROFILE = flags.profile
  const network = resolveNetwork(flags.network ?? process.env.GPUNET_NETWORK, note)
  return runJobExec({
    job,
    op: flags.op,
    cmd,
    network,
    rpc: flags.rpc,
    networkHost: flags['network-host'],
    wallet: flags.wallet,
    note,
  })
}
