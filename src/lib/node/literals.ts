/**
 * The network's global literals in a job's operation args, resolved as its nodes resolve them before an operation
 * starts (TaskManager's interpolateOperation: the args only, never `global`'s members): `%%global.job%%`,
 * `%%global.project%%` (the poster), `%%global.host%%` (the node) and `%%global.variables.NAME%%`. The reader
 * refuses any other literal before paying (definition/network-form/literals.ts), so every one left here resolves.
 */
import {globalLiteral, type LiteralValues, NETWORK_LITERAL} from '../definition/network-form/literals.js'
import {isObject} from '../definition/paths.js'
import type {JobDefinition} from '../definition/schema.js'

/** The definition with the literals in its operations' args replaced; throws naming one that does not resolve. */
export function resolveLiterals(definition: JobDefinition, values: LiteralValues): JobDefinition {
  return {...definition, ops: definition.ops.map((op) => ({...op, args: replaceIn(op.args, values)}))}
}

function replaceIn<T>(value: T, values: LiteralValues): T {
  if (typeof value === 'string') {
    return value.replace(NETWORK_LITERAL, (literal, kind: string, body: string) => {
      const resolved = kind === 'ops' ? null : globalLiteral(body, values)
      if (resolved === null) throw new Error(`The literal ${literal} does not resolve on the localnet's node.`)
      return resolved
    }) as T
  }
  if (Array.isArray(value)) return value.map((item: unknown) => replaceIn(item, values)) as T
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, replaceIn(item, values)])) as T
  }
  return value
}
