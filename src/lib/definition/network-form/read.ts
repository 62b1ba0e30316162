/**
 * The one reader of a definition in the network's form, shared by the client and the localnet's node: the network's
 * own validator (@nosana/types, bundled) decides whether a node would take it, and `runnableOnLocalnet` turns what
 * it took into the spec model the localnet's node runs, refusing what that node cannot run.
 */
import {type DefinitionIssue, makeIssue} from '../issue.js'
import {isObject, type PathSegment} from '../paths.js'
import type {JobDefinition} from '../schema.js'
import {specVerdict} from '../spec-verdict.js'
import {type NodeMembers, takeNodeMembers} from './node-members.js'
import {NOSANA_TYPES_VERSION, nosanaValidateJobDefinition} from './nosana-validator.generated.js'
import type {NetworkDefinition} from './types.js'

/** The validator the network's nodes run, as named in verdicts: `@nosana/types 2.1.6`. */
export const NETWORK_VALIDATOR = `@nosana/types ${NOSANA_TYPES_VERSION}`

/** A network-form definition the network's validator accepts, or its every refusal. */
export type NetworkRead = {ok: true; document: NetworkDefinition} | {ok: false; issues: DefinitionIssue[]}

/** Runs the network's validator on a parsed definition: what a node of the live network does with what it claims. */
export function readNetworkDefinition(value: unknown): NetworkRead {
  const verdict = nosanaValidateJobDefinition(value)
  if (verdict.success) return {ok: true, document: value as NetworkDefinition}
  return {ok: false, issues: verdict.errors.map((e) => networkIssue(e.path, e.expected, e.value))}
}

function networkIssue(path: string, expected: string, value: unknown): DefinitionIssue {
  const segments = typiaPath(path)
  const message =
    value === undefined
      ? `is required by ${NETWORK_VALIDATOR} (expected ${expected})`
      : expected === 'undefined'
        ? `is not a member ${NETWORK_VALIDATOR} knows: the network's nodes fail a job that has it`
        : `is refused by ${NETWORK_VALIDATOR}: expected ${expected}`
  return makeIssue(segments, 'network_refused', message)
}

/** `$input.ops[0].args["a-b"]` as path segments. */
function typiaPath(path: string): PathSegment[] {
  const segments: PathSegment[] = []
  const step = /\.([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g
  for (const match of path.replace(/^\$input/, '').matchAll(step)) {
    if (match[1] !== undefined) segments.push(match[1])
    else if (match[2] !== undefined) segments.push(Number(match[2]))
    else segments.push(JSON.parse(match[3]!) as string)
  }
  return segments
}

/**
 * What the localnet's node runs of a network-form definition (spec 0.1's model, and beside it the members that say
 * how the node runs it), or every member it cannot run.
 */
export type LocalnetRead =
  {ok: true; definition: JobDefinition; members: NodeMembers} | {ok: false; issues: DefinitionIssue[]}

/**
 * The spec model of a definition the network's validator accepted, as the localnet's node runs it: the reverse of
 * the translation (translate.ts), so a spec definition comes back with the same meaning (not always the same
 * members: `required_vram` returns inside `meta.system_resources`, an S3 `url` as an endpoint and a bucket). The
 * members that say how the node runs it (`execution`, `restart_policy`, continuous checks, `results`, volumes,
 * `global.variables`) come apart, in `members`. Whatever else has no spec meaning the node could copy is refused, named.
 */
export async function runnableOnLocalnet(document: NetworkDefinition): Promise<LocalnetRead> {
  const issues: DefinitionIssue[] = []
  const model = structuredClone(document) as NetworkDefinition
  // The deployment's key: it names no member of spec 0.1, and says where the node serves the ports (members).
  const deploymentId = model.deployment_id
  delete model.deployment_id
  const trigger = model.meta?.trigger
  if (model.meta && trigger !== undefined && trigger !== 'cli' && trigger !== 'dashboard') delete model.meta.trigger
  const members = takeNodeMembers(model, issues)
  // The network's validator took it, so it is a string when present.
  if (typeof deploymentId === 'string') members.deploymentId = deploymentId
  for (const [i, op] of model.ops.entries()) {
    const args = op.args
    if (!Array.isArray(args.resources)) continue
    // Each further location of several `buckets` goes last, as a resource of the same target: the node loads
    // resources of one target into one folder, and the written resources keep their places (and paths).
    const further: Record<string, unknown>[] = []
    args.resources = args.resources.map((resource: unknown, r) => {
      if (!isObject(resource) || resource.type !== 'S3') return resource
      if (resource.bucket !== undefined) {
        issues.push(
          makeIssue(
            ['ops', i, 'args', 'resources', r, 'bucket'],
            'localnet_cannot_run',
            "the network's nodes hand `bucket` beside `url` to their S3 helper, a meaning the localnet's node does not copy",
            'write the location as `buckets: [{url: "<endpoint>/<bucket>", files}]`, or as a spec 0.1 resource',
          ),
        )
        return resource
      }
      const buckets = resource.buckets
      const locations = Array.isArray(buckets) && buckets.length > 0 ? (buckets as unknown[]) : [undefined]
      const models = locations.map((location, b) => {
        const s3 = s3Model(resource, location as Record<string, unknown> | undefined)
        if (s3.bucket === undefined) {
          const at: PathSegment[] = ['ops', i, 'args', 'resources', r, ...(location ? ['buckets', b] : [])]
          issues.push(
            makeIssue(
              at,
              'localnet_cannot_run',
              "the localnet's node reads S3 at `<endpoint>/<bucket>`, and this location names no bucket",
              'write each location as `url: "<endpoint>/<bucket>"` with its `files`',
            ),
          )
        }
        return s3
      })
      further.push(...models.slice(1))
      return models[0]
    })
    ;(args.resources as unknown[]).push(...further)
  }
  if (issues.length > 0) return {ok: false, issues}
  // Volume operations have no spec 0.1 form: the node runs them from their members alone.
  const kept = model.ops.flatMap((op, i) => (op.type === 'container/create-volume' ? [] : [i]))
  model.ops = kept.map((i) => model.ops[i]!)
  const spec = await specVerdict(model)
  if (spec.success) return {ok: true, definition: spec.data, members}
  return {
    ok: false,
    issues: spec.errors.map((e) => ({
      ...inWritten(e, kept),
      code: 'localnet_cannot_run' as const,
      message: `the localnet's node cannot run it: ${e.message}`,
      hint: "it runs what spec 0.1 describes; post it to devnet or mainnet, where the network's nodes take it",
    })),
  }
}

/** An issue found in the model without volume operations, pointing into the definition as written. */
function inWritten(issue: DefinitionIssue, kept: number[]): DefinitionIssue {
  const at = /^\/ops\/(\d+)/.exec(issue.pointer)
  if (!at) return issue
  const index = kept[Number(at[1])]!
  return {
    ...issue,
    pointer: issue.pointer.replace(/^\/ops\/\d+/, `/ops/${index}`),
    path: issue.path.replace(/^ops\[\d+\]/, `ops[${index}]`),
  }
}

/**
 * A network S3 location (`url`, or `location`, an entry of `buckets`) as the spec's endpoint and bucket: the location
 * is `<endpoint>/<bucket>`, path style, as the translation writes it. Without a bucket in it, none is set.
 */
function s3Model(
  resource: Record<string, unknown>,
  location: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const url = (location ? location.url : resource.url) as string | undefined
  const files = location ? location.files : resource.files
  if (url === undefined) return resource
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return resource
  }
  const path = parsed.pathname.replace(/\/+$/, '')
  const cut = path.lastIndexOf('/')
  // With its trailing slashes gone, a path that has a slash has a last segment: the bucket.
  if (cut < 0) return resource
  const model: Record<string, unknown> = {...resource, url: `${parsed.origin}${path.slice(0, cut)}`}
  delete model.buckets
  delete model.files
  return {...model, bucket: decodeURIComponent(path.slice(cut + 1)), ...(files ? {files} : {})}
}
