/**
 * The definition a deployment's jobs are listed with: the one `create` or `create-revision` received, checked as
 * `job post` checks it, in the network's form, with the two members the network's deployment manager adds to every
 * definition it pins (its `deploymentCreate.factory.ts`): `deployment_id`, the deployment's id, so that the nodes
 * serve all its replicas under one load-balanced domain per exposed operation, and `meta.trigger`, which says who
 * posted the job. A `deployment_id` already there is replaced, as the network's manager replaces it: a replica under
 * another deployment's domain would serve the wrong deployment.
 */
import {checkPostableText} from '../../definition/upload.js'
import {readNetworkDefinition} from '../../definition/network-form/read.js'
import type {NetworkDefinition} from '../../definition/network-form/types.js'
import {checkDefinitionSize} from '../../definition/size.js'
import {computeCidV0} from '../../ipfs/cid.js'
import {badRequest} from '../../http/api-error.js'
import type {ManagerContext} from '../context.js'

/** The `meta.trigger` of the jobs a deployment manager lists, as the network's manager writes it. */
export const MANAGER_TRIGGER = 'deployment-manager'

/** A definition ready to be uploaded for a deployment's jobs: its CID, the bytes, and the document as text. */
export interface ListedDefinition {
  cid: string
  bytes: Uint8Array
  /** The document uploaded (compact JSON), kept as the revision's `job_definition`: what its jobs run. */
  text: string
}

/**
 * Checks `definition` as `job post` does (400, nothing changed, when refused: `nothing` says what was not done) and
 * makes the document the jobs of `deployment` are listed with. Nothing is uploaded yet.
 */
export async function listedDefinition(
  ctx: ManagerContext,
  deployment: string,
  definition: unknown,
  nothing: string,
): Promise<ListedDefinition> {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition))
    throw badRequest('invalid_job_definition', `job_definition must be a job definition object; ${nothing}`)
  const {upload} = await checkPostableText(
    JSON.stringify(definition),
    'job_definition',
    ctx.network,
    `check it with \`gpunet job validate --network ${ctx.network}\`; ${nothing}`,
  )
  // Added to the network's form (after the spec's translation, which knows neither member), as the network's manager
  // adds them to the definition it pins.
  const document: NetworkDefinition = {
    ...upload.document,
    deployment_id: deployment,
    meta: {...upload.document.meta, trigger: MANAGER_TRIGGER},
  }
  // Uploaded indented, as `job post` uploads a definition.
  const bytes = new TextEncoder().encode(`${JSON.stringify(document, null, 2)}\n`)
  checkDefinitionSize(bytes)
  // The network's validator takes both members (a string each); the bytes uploaded are checked all the same.
  const read = readNetworkDefinition(JSON.parse(new TextDecoder().decode(bytes)))
  if (!read.ok)
    throw badRequest('invalid_job_definition', `${read.issues[0]!.path}: ${read.issues[0]!.message}; ${nothing}`)
  return {cid: computeCidV0(bytes).cid, bytes, text: JSON.stringify(document)}
}

/** Uploads a listed definition to the network's content store, where the nodes that take its jobs read it. */
export async function uploadListed(ctx: ManagerContext, listed: ListedDefinition): Promise<void> {
  await ctx.net.content().add(listed.bytes)
}
