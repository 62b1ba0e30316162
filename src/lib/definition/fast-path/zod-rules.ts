// The rules of the zod schema that its JSON Schema cannot say, for the generated validator to call. Each one
// is zod's own check, so the fast path cannot drift from the schema that explains a failure. Where zod would
// rewrite a value (trim a URL, drop a `__proto__` member), the value is refused here and goes to zod, so the
// result carries zod's rewrite.
import {util} from 'zod/v4/core'

import {uriSchema} from '../schema.js'

/** `format: uri` as zod's `url()` decides it, for a URL zod keeps as written (no spaces around it, no tabs). */
function isUnchangedUri(text: string): boolean {
  const parsed = uriSchema.safeParse(text)
  return parsed.success && parsed.data === text
}

/** The formats the generated validator refers to as `fastPathFormats.NAME`. */
export const fastPathFormats = {uri: isUnchangedUri}

/** False for an object with an own `__proto__` member, which zod drops from records and loose objects. */
export function hasNoProtoMember(value: object): boolean {
  return !Object.prototype.hasOwnProperty.call(value, '__proto__')
}

/**
 * What zod's `record()` takes beyond what JSON Schema says: a plain object (not a class instance) without
 * enumerable symbol keys (zod checks each against the key schema, a string; a `for ... in` loop skips them).
 */
export function isPlainRecord(value: object): boolean {
  if (!util.isPlainObject(value) || !hasNoProtoMember(value)) return false
  for (const key of Object.getOwnPropertySymbols(value)) {
    if (Object.prototype.propertyIsEnumerable.call(value, key)) return false
  }
  return true
}
