/**
 * Checks `job post` makes before anything is uploaded or paid: the secrets the job refers to are stored, and
 * on localnet a node can run it. A job that would fail on the node, or wait for a node that never comes, is
 * refused while it costs nothing.
 */
import type {JobDefinition} from '../definition/schema.js'
import {findSecretReferences} from '../definition/secret-refs.js'
import {ExitCode, GpunetError, isGpunetError} from '../errors.js'
import type {LocalnetMarketNodes, LocalnetNodeStatus} from '../market/connect.js'
import {commandArgv, needsGpu, planOperations} from '../node/operation-plan.js'
import {connectSecrets, type SecretsConnectOptions} from '../network-connection.js'
import type {Settings} from '../settings/settings.js'

const SKIP_SECRETS = 'pass --no-secrets-check to post without checking (the job fails on the node if one is missing)'

/**
 * The names of the secrets the definition refers to, once each is found in the poster's store; exit 3 naming
 * the missing ones. A store that cannot be asked keeps its own error, with a hint to skip the check.
 */
export async function checkSecretsStored(
  definition: unknown,
  settings: Settings,
  options: SecretsConnectOptions & {note: (line: string) => void},
): Promise<string[]> {
  const {network} = settings
  const names = findSecretReferences(definition)
  if (names.length === 0) return []
  let stored: Record<string, string>
  try {
    stored = await (await connectSecrets(settings, options)).list()
  } catch (error) {
    if (!isGpunetError(error) || error.exitCode === ExitCode.INVALID_INPUT) throw error
    throw new GpunetError(error.code, error.message, {
      exitCode: error.exitCode,
      hint: `${error.hint ? `${error.hint}; or ` : ''}${SKIP_SECRETS}`,
      fields: error.fields,
      cause: error,
    })
  }
  const missing = names.filter((name) => !Object.hasOwn(stored, name))
  if (missing.length > 0) {
    const onNetwork = network === 'localnet' ? '' : ` --network ${network}`
    throw new GpunetError(
      'secret_missing',
      `the job refers to ${missing.length === 1 ? 'a secret' : 'secrets'} you have not stored on ${network}: ${missing.join(', ')}`,
      {
        exitCode: ExitCode.INVALID_INPUT,
        hint: `store ${missing.length === 1 ? 'it' : 'each'} with \`gpunet secrets set ${missing[0]}${onNetwork}\` (the value on standard input), then post again; nothing was uploaded or sent`,
        fields: {missing},
      },
    )
  }
  return names
}

/**
 * Why no localnet node would run this job (its node is off, it has no GPU for a GPU job, or its market has no node),
 * or null when one can. `node` is the localnet's node status: null when the localnet was started with --no-node.
 * Every market's nodes share the runtime and GPUs of that status; `market` is the job's (the default one if not given).
 */
export function localnetRunProblem(
  node: LocalnetNodeStatus | null,
  definition: JobDefinition,
  market?: LocalnetMarketNodes,
): GpunetError | null {
  const anyway = 'or pass --queue-anyway to post it all the same (it stays QUEUED until a node takes it)'
  if (node !== null && !('off' in node) && market && market.nodes === 0) {
    return new GpunetError('no_node', `no localnet node would run this job: no node serves market ${market.slug}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: `give that market nodes in the markets file (\`gpunet localnet reset --markets FILE\`), post to another market (\`gpunet market list\`), ${anyway}`,
      fields: {market: market.address},
    })
  }
  if (node === null) {
    return new GpunetError('no_node', 'no localnet node would run this job: the localnet was started with --no-node', {
      exitCode: ExitCode.UNAVAILABLE,
      hint: `restart it with its node (\`gpunet localnet stop && gpunet localnet start --detach\`), ${anyway}`,
    })
  }
  if ('off' in node) {
    return new GpunetError('node_off', `no localnet node would run this job: the node is off. ${node.off}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint:
        'install podman (https://podman.io/docs/installation, e.g. `sudo apt-get install podman`) and restart the ' +
        'localnet (`gpunet localnet stop && gpunet localnet start --detach`), or restart it with ' +
        `\`gpunet localnet start --detach --host-processes\` to run jobs on this machine without isolation, ${anyway}`,
    })
  }
  if (node.runtime === 'host-process') {
    // A host process runs the operation's own command: it has no image whose default command could run.
    const bare = planOperations(definition).findIndex(
      (op) => (op.entrypoint ?? []).length === 0 && commandArgv(op.command).length === 0,
    )
    if (bare >= 0) {
      const id = definition.ops[bare]!.id
      return new GpunetError(
        'host_needs_command',
        `no localnet node would run this job: its node runs host processes, and operation ${id} has no \`cmd\` of its own, only its image's`,
        {
          exitCode: ExitCode.UNAVAILABLE,
          hint: `give it a \`cmd\`, or run the localnet with podman (\`gpunet localnet start --detach --runtime podman\`), ${anyway}`,
        },
      )
    }
  }
  if (node.gpus === 0 && needsGpu(definition)) {
    return new GpunetError('no_gpu_node', 'no localnet node would run this job: it needs a GPU and the node has none', {
      exitCode: ExitCode.UNAVAILABLE,
      hint: `start the localnet on a machine that has GPUs (\`gpunet localnet start --gpus N\`), or drop \`gpu: true\`, ${anyway}`,
    })
  }
  return null
}
