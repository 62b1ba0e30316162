/**
 * A spec 0.1 definition in the form the live network's nodes accept (@nosana/types), with the same meaning: the
 * table in docs/networks.md, member by member. What has no equivalent is refused, naming the member and why.
 */
import {type DefinitionIssue, makeIssue} from '../issue.js'
import {formatPath, isObject, type PathSegment} from '../paths.js'
import type {JobDefinition, Resource} from '../schema.js'
import type {NetworkDefinition} from './types.js'

/** One change the translation made, for `--dry-run` and notes: where, and what it became. */
export interface NetworkChange {
  path: string
  change: string
}

/** The network's form of a definition and what changed on the way, or every member that has no equivalent. */
export type Translation =
  {ok: true; document: NetworkDefinition; changes: NetworkChange[]} | {ok: false; issues: DefinitionIssue[]}

const S3_IAM_MEMBERS = ['ACCESS_KEY_ID', 'REGION', 'SECRET_ACCESS_KEY'] as const

/** Translates a spec-valid definition (what `validateJobDefinition` accepted) to the network's form. */
export function toNetworkForm(spec: JobDefinition): Translation {
  const issues: DefinitionIssue[] = []
  const changes: NetworkChange[] = []
  const refuse = (path: PathSegment[], message: string, hint?: string) =>
    issues.push(makeIssue(path, 'no_network_equivalent', message, hint))
  const changed = (path: string, change: string) => changes.push({path, change})

  const document = structuredClone(spec) as unknown as NetworkDefinition & {$schema?: string}
  delete document.$schema
  if (document.meta) checkMeta(document.meta, refuse)

  let vram: number | undefined
  for (const [i, op] of document.ops.entries()) {
    const at = (...rest: PathSegment[]): PathSegment[] => ['ops', i, 'args', ...rest]
    if (op.id.includes(' ')) {
      refuse(['ops', i, 'id'], "the network's nodes refuse an operation id with a space", 'use `-` or `_` instead')
    }
    const args = op.args as Record<string, unknown>
    if (args.output !== undefined) {
      refuse(
        at('output'),
        "the network's nodes no longer read `output` (@nosana/types has no such member) and fail the job",
        'remove it: write results to the logs, or upload them from the container',
      )
    }
    if (typeof args.required_vram === 'number') {
      vram = Math.max(vram ?? 0, args.required_vram)
      delete args.required_vram
      changed(`ops[${i}].args.required_vram`, 'moved to meta.system_resources.required_vram (the largest of all)')
    }
    const expose = args.expose
    if (Array.isArray(expose)) translatePorts(expose, at('expose'), refuse, changed)
    if (Array.isArray(args.resources)) {
      args.resources = (args.resources as Resource[]).map((resource, r) =>
        translateResource(resource, at('resources', r), refuse, changed),
      )
    }
  }
  if (vram !== undefined) mergeVram(document, vram, refuse)
  return issues.length > 0 ? {ok: false, issues} : {ok: true, document, changes}
}

type Refuse = (path: PathSegment[], message: string, hint?: string) => void
type Changed = (path: string, change: string) => void

/** The network takes `meta` values that are strings, numbers, lists of them, or one level of object of those. */
function checkMeta(meta: Record<string, unknown>, refuse: Refuse): void {
  const flat = (v: unknown) => typeof v === 'string' || typeof v === 'number'
  const list = (v: unknown) => Array.isArray(v) && v.every(flat)
  for (const [key, value] of Object.entries(meta)) {
    if (key === 'trigger' || key === 'system_resources') continue
    if (flat(value) || list(value)) continue
    if (isObject(value)) {
      for (const [inner, v] of Object.entries(value)) {
        if (!flat(v) && !list(v)) refuse(['meta', key, inner], metaMessage(v), META_HINT)
      }
      continue
    }
    refuse(['meta', key], metaMessage(value), META_HINT)
  }
}

const META_HINT = 'write it as a string (JSON text, "true", "null"), or move it one level up'

function metaMessage(value: unknown): string {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'a list of lists or objects' : typeof value
  const what = kind === 'object' ? 'an object this deep' : kind === 'boolean' ? 'a boolean' : kind
  return `the network's nodes refuse ${what} in meta: only strings, numbers, lists of them, and objects of those`
}

/** Health checks gain `continuous: false` (checked until ready, as the spec means); a port exposed twice is refused. */
function translatePorts(expose: unknown[], at: PathSegment[], refuse: Refuse, changed: Changed): void {
  const seen = new Set<number>()
  for (const [p, entry] of expose.entries()) {
    if (!isObject(entry)) continue
    const port = entry.port as number
    if (seen.has(port)) {
      refuse(
        [...at, p, 'port'],
        `port ${port} is exposed twice in this operation: the network's nodes refuse a repeated port`,
        'expose it once, with all its health checks',
      )
    }
    seen.add(port)
    const checks = entry.health_checks
    if (!Array.isArray(checks)) continue
    for (const check of checks as Record<string, unknown>[]) check.continuous = false
    if (checks.length > 0) changed(`${formatPath(at)}[${p}].health_checks`, 'each gained `continuous: false`')
  }
}

/**
 * S3 with `bucket` becomes one entry of the network's `buckets` list at `<url>/<bucket>` (path style), its `files`
 * with it; S3 without one keeps `url` and `files`. HF keeps `repo` and `files`. Members a type does not take are
 * refused, as is an incomplete `IAM`.
 */
function translateResource(resource: Resource, at: PathSegment[], refuse: Refuse, changed: Changed): unknown {
  const foreign = (member: string, why: string) =>
    refuse([...at, member], `${resource.type} resources on the network take no \`${member}\`: ${why}`)
  if (resource.type === 'HF') {
    for (const member of ['url', 'bucket', 'IAM'] as const) {
      if (resource[member] !== undefined) foreign(member, 'they are read from Hugging Face by `repo`')
    }
    if (resource.repo === undefined) {
      refuse(at, "an HF resource needs `repo`: the network's nodes refuse one without it", 'add `repo`: "org/model"')
    }
    return resource
  }
  if (resource.repo !== undefined) foreign('repo', '`repo` names a Hugging Face repository')
  if (resource.IAM !== undefined) {
    const missing = S3_IAM_MEMBERS.filter((member) => resource.IAM?.[member] === undefined)
    if (missing.length > 0) {
      refuse(
        [...at, 'IAM'],
        `IAM lacks ${missing.map((m) => `\`${m}\``).join(', ')}: the network's nodes need all three`,
        'give REGION, ACCESS_KEY_ID and SECRET_ACCESS_KEY (%%secrets.NAME%% keeps the keys out of the file)',
      )
    }
  }
  if (resource.url === undefined) {
    refuse(at, "an S3 resource needs `url`: the network's nodes read nothing without it", 'add the endpoint as `url`')
    return resource
  }
  if (resource.bucket === undefined) return resource
  const {bucket, files, url, ...rest} = resource
  changed(formatPath(at), '`url` and `bucket` became `buckets: [{url: "<url>/<bucket>", files}]`')
  return {...rest, buckets: [{url: `${url.replace(/\/+$/, '')}/${bucket}`, ...(files ? {files} : {})}]}
}

function mergeVram(document: NetworkDefinition, vram: number, refuse: Refuse): void {
  document.meta ??= {}
  const resources = (document.meta.system_resources ??= {}) as Record<string, string | number>
  const current = resources.required_vram
  if (current === undefined) {
    resources.required_vram = vram
    return
  }
  const stated = typeof current === 'number' ? current : Number(current)
  if (!Number.isFinite(stated) || String(current).trim() === '') {
    refuse(
      ['meta', 'system_resources', 'required_vram'],
      `is ${JSON.stringify(current)}, not a number, so the operations' required_vram cannot join it`,
      'give it in GiB as a number',
    )
    return
  }
  resources.required_vram = Math.max(stated, vram)
}
