/**
 * The network's literals in a definition's strings (`%%global.…%%`, `%%ops.…%%`), which its nodes resolve before an
 * operation starts (TaskManager's interpolateOperation). The localnet's node resolves the global ones it has a
 * value for (node/literals.ts); the reader refuses the rest before paying, naming them.
 */
import {type DefinitionIssue, makeIssue} from '../issue.js'
import {type PathSegment, visitStrings} from '../paths.js'

/** A network literal inside a string: `%%global.x%%`, `%%globals.x%%`, `%%global.variables.NAME%%`, `%%ops.id.path%%`. */
export const NETWORK_LITERAL = /%%(ops|globals?)\.([^%]+?)%%/g

/** What the global literals of one job stand for. */
export interface LiteralValues {
  job: string
  project: string
  host: string
  variables: Readonly<Record<string, string>>
}

/** What a global literal's body (after `global.`) stands for, or null when the localnet's node has no value for it. */
export function globalLiteral(body: string, values: LiteralValues): string | null {
  if (body === 'job' || body === 'project' || body === 'host') return values[body]
  const variable = /^variables\.(.+)$/.exec(body)
  if (variable && Object.hasOwn(values.variables, variable[1]!)) return values.variables[variable[1]!]!
  return null
}

/** An issue for each literal in the operations' strings that the localnet's node would not resolve. */
export function unresolvedLiterals(
  ops: readonly {args: unknown}[],
  variables: Readonly<Record<string, string>>,
  issues: DefinitionIssue[],
): void {
  const probe: LiteralValues = {job: 'job', project: 'project', host: 'host', variables}
  for (const [i, op] of ops.entries()) {
    visitStrings(op.args, (text, path) => {
      for (const [literal, kind, body] of text.matchAll(NETWORK_LITERAL)) {
        const at: PathSegment[] = ['ops', i, 'args', ...path]
        if (kind !== 'ops' && globalLiteral(body!, probe) !== null) continue
        const unknownVariable = kind !== 'ops' && /^variables\./.test(body!)
        issues.push(
          unknownVariable
            ? makeIssue(
                at,
                'invalid_value',
                `${literal} names a variable \`global.variables\` does not have: the network's nodes fail the operation`,
                'add it to `global.variables`',
              )
            : makeIssue(
                at,
                'localnet_cannot_run',
                `the localnet's node does not resolve ${literal} (it resolves %%global.job%%, %%global.project%%, %%global.host%% and %%global.variables.NAME%%)`,
                "post it to devnet or mainnet, where the network's nodes resolve it",
              ),
        )
      }
    })
  }
}
