/**
 * What `job post` uploads, decided before anything is uploaded or paid: a spec 0.1 definition in the network's form
 * (translate.ts), or a definition already written in the network's newer format; then the network's own validator
 * on exactly the bytes to upload and, on localnet, whether the localnet's node can run them.
 */
import type {Network} from '../../network.js'
import {counted} from '../../text/words.js'
import type {DefinitionIssue} from '../issue.js'
import type {JobDefinition} from '../schema.js'
import {checkDefinitionSize} from '../size.js'
import {specVerdict} from '../spec-verdict.js'
import type {ValidationResult} from '../validate.js'
import {nodeRefusals} from './node-members.js'
import {NETWORK_VALIDATOR, readNetworkDefinition, runnableOnLocalnet} from './read.js'
import {type NetworkChange, toNetworkForm} from './translate.js'
import type {NetworkDefinition} from './types.js'

/** The issue codes of a refusal by the network's form rather than by the spec; callers name the error after them. */
export const NETWORK_REFUSALS: ReadonlySet<string> = new Set([
  'no_network_equivalent',
  'network_refused',
  'localnet_cannot_run',
])

/** One check a job went through before posting, and its verdict: `job post --dry-run` shows them all. */
export interface NetworkCheck {
  by: string
  verdict: string
}

/** A definition ready to upload to `network`. */
export interface PreparedUpload {
  network: Network
  /** What is uploaded, parsed: the network's form. */
  document: NetworkDefinition
  /** Exactly the bytes uploaded (indented JSON), which the network's validator accepted. */
  bytes: Uint8Array
  /** The definition as the localnet's node runs it (localnet), or as written when it is spec 0.1; else null. */
  runnable: JobDefinition | null
  changes: NetworkChange[]
  checks: NetworkCheck[]
  /** The members of a definition in the network's newer format that go beyond spec 0.1. */
  beyondSpec: DefinitionIssue[]
}

/** A prepared upload, or why not: the spec's errors, or the members the network (or the localnet's node) refuses. */
export type Preparation = {ok: true; upload: PreparedUpload} | {ok: false; issues: DefinitionIssue[]}

const SPEC = 'spec 0.1'

/**
 * Prepares `value` (a parsed definition file) for `network`. `spec` is the spec's verdict when the caller has it.
 * Throws only for a definition past the size cap (GpunetError, exit 3).
 */
export async function prepareUpload(value: unknown, network: Network, spec?: ValidationResult): Promise<Preparation> {
  const stripped = withoutSchema(value)
  let verdict = spec ?? (await specVerdict(stripped))
  const checks: NetworkCheck[] = []
  let document: NetworkDefinition
  let changes: NetworkChange[] = []
  let beyondSpec: DefinitionIssue[] = []
  // Spec 0.1 plus the network's `deployment_id`, which the spec does not define: the rest is translated as spec 0.1
  // (so a health check gains its `continuous` as it would without the id), the id goes along as written, and a
  // warning says it is beyond the spec. The network's validator then says whether the id is one (a string).
  const deployment = await withDeploymentId(verdict, stripped)
  if (deployment) {
    verdict = deployment.verdict
    beyondSpec = deployment.beyondSpec
  }
  if (verdict.success) {
    const translation = toNetworkForm(verdict.data)
    if (!translation.ok) return {ok: false, issues: translation.issues}
    document = deployment ? {...translation.document, deployment_id: deployment.id} : translation.document
    changes = translation.changes
    checks.push({by: SPEC, verdict: deployment ? 'valid, beside `deployment_id`' : 'valid'})
    checks.push({
      by: 'translation',
      verdict: changes.length > 0 ? counted(changes.length, 'change') : 'no change needed',
    })
  } else {
    // A definition in the network's newer format (the spec's only complaint is members it does not know): taken as
    // written when the network's validator takes it. Else both say why; the network's word on a member the spec
    // already named is left out.
    const network = readNetworkDefinition(stripped)
    if (!network.ok || !verdict.errors.every((e) => e.code === 'unknown_field' || inVolumeOp(e, stripped))) {
      const named = new Set(verdict.errors.map((e) => e.path))
      const refused = network.ok ? [] : network.issues
      const more = refused.filter((i) => !named.has(i.path))
      // A member the spec does not know but the network's form has, with a value the network refuses (a
      // `deployment_id` that is not a string): the network's word says what is wrong, the spec's would not.
      const valueRefused = new Map(refused.filter((i) => i.message.startsWith('is refused by')).map((i) => [i.path, i]))
      const issues = verdict.errors.map((e) => (e.code === 'unknown_field' && valueRefused.get(e.path)) || e)
      return {ok: false, issues: [...issues, ...more]}
    }
    document = stripped as NetworkDefinition
    beyondSpec = verdict.errors.map(beyond)
    checks.push({by: SPEC, verdict: `beyond it (${counted(beyondSpec.length, 'member')})`})
  }
  const bytes = new TextEncoder().encode(`${JSON.stringify(document, null, 2)}\n`)
  checkDefinitionSize(bytes)
  // Exactly what is uploaded goes through the network's validator: the bytes, parsed back.
  const read = readNetworkDefinition(JSON.parse(new TextDecoder().decode(bytes)))
  if (!read.ok) return {ok: false, issues: read.issues}
  checks.push({by: NETWORK_VALIDATOR, verdict: 'accepted'})
  // What the validator takes but the network's nodes would fail or never start: refused on every network.
  const refusals = nodeRefusals(read.document)
  if (refusals.length > 0) return {ok: false, issues: refusals}
  let runnable: JobDefinition | null = verdict.success ? verdict.data : null
  if (network === 'localnet') {
    const local = await runnableOnLocalnet(read.document)
    if (!local.ok) return {ok: false, issues: local.issues}
    runnable = local.definition
    checks.push({by: "the localnet's node", verdict: 'runs it'})
  }
  return {ok: true, upload: {network, document, bytes, runnable, changes, checks, beyondSpec}}
}

/** Whether a spec error is about the args of a `container/create-volume` operation, which spec 0.1 has no form for. */
function inVolumeOp(issue: DefinitionIssue, value: unknown): boolean {
  const at = /^\/ops\/(\d+)\/args(\/|$)/.exec(issue.pointer)
  const ops = (value as {ops?: unknown}).ops
  const op = at && Array.isArray(ops) ? (ops[Number(at[1])] as {type?: unknown} | undefined) : undefined
  return op?.type === 'container/create-volume'
}

/** A member the spec does not define, which the network's newer format has: a warning, not an error. */
function beyond(issue: DefinitionIssue): DefinitionIssue {
  return {
    ...issue,
    code: 'beyond_spec' as const,
    message: `goes beyond spec 0.1 (${issue.message}); the network's newer format has it`,
    hint: `${NETWORK_VALIDATOR} accepts it; other clients of spec 0.1 may not`,
  }
}

/**
 * When the spec's one complaint is a top-level `deployment_id`: the spec's verdict on the rest, the id as written
 * and its warning. Otherwise null.
 */
async function withDeploymentId(
  verdict: ValidationResult,
  value: unknown,
): Promise<{verdict: ValidationResult; id: unknown; beyondSpec: DefinitionIssue[]} | null> {
  if (verdict.success || !verdict.errors.every((e) => e.code === 'unknown_field' && e.path === 'deployment_id'))
    return null
  const rest = {...(value as Record<string, unknown>)}
  const id = rest.deployment_id
  delete rest.deployment_id
  const inner = await specVerdict(rest)
  return inner.success ? {verdict: inner, id, beyondSpec: verdict.errors.map(beyond)} : null
}

function withoutSchema(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('$schema' in value)) return value
  const rest = {...(value as Record<string, unknown>)}
  delete rest.$schema
  return rest
}
