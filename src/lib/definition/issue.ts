import {MAX_NESTING_DEPTH, tooDeepAt} from '../text/nesting.js'
import {formatPath, type PathSegment, toPointer} from './paths.js'

/** Stable machine codes of definition errors and warnings; scripts may rely on them. */
export type IssueCode =
  | 'unreadable'
  | 'not_text'
  | 'syntax_error'
  | 'not_an_object'
  | 'missing_field'
  | 'unknown_field'
  | 'invalid_type'
  | 'invalid_value'
  | 'invalid_uri'
  | 'too_few_items'
  | 'duplicate_id'
  | 'port_out_of_range'
  | 'invalid'
  | 'too_deep'
  // a network's verdict (job validate --network, job post)
  | 'no_network_equivalent'
  | 'network_refused'
  | 'localnet_cannot_run'
  // warnings
  | 'inline_credential'
  | 'malformed_secret_reference'
  | 'resource_incomplete'
  | 'beyond_spec'

/** One problem found in a job definition: where it is, a stable code, and words a person reads at a glance. */
export interface DefinitionIssue {
  /** `ops[0].args.image`; "" for the document itself. */
  path: string
  /** RFC 6901 pointer: `/ops/0/args/image`. */
  pointer: string
  code: IssueCode
  message: string
  /** A concrete next step, when there is one. */
  hint?: string
}

/** Builds an issue from path segments. */
export function makeIssue(
  segments: readonly PathSegment[],
  code: IssueCode,
  message: string,
  hint?: string,
): DefinitionIssue {
  return {path: formatPath(segments), pointer: toPointer(segments), code, message, ...(hint ? {hint} : {})}
}

/** Backticked name of the member a path ends in, for messages: `image`, `ops[2]`. */
export function memberName(segments: readonly PathSegment[]): string {
  const last = segments.at(-1)
  if (last === undefined) return 'the job definition'
  if (typeof last === 'number') return `\`${formatPath(segments.slice(-2))}\``
  return `\`${last}\``
}

/** The issue of a definition nested past the one limit (nesting.ts), at the first member too deep; else null. */
export function nestingIssue(value: unknown): DefinitionIssue | null {
  const path = tooDeepAt(value)
  if (!path) return null
  return makeIssue(
    path,
    'too_deep',
    `nests arrays and objects more than ${MAX_NESTING_DEPTH} deep, the most a definition may`,
    'flatten this member: no network reads a definition nested this deep',
  )
}
