// The rules of the zod schema that its JSON Schema cannot say, for the generated validator to call. Where zod
// would rewrite a value (trim a URL, drop a `__proto__` member), the value is refused here and goes to zod, so the
// result carries zod's rewrite. Nothing here loads zod's schemas: `gpunet job validate` on a valid file runs
// without them (they are most of its start-up), and the property test holds these rules to zod's verdicts.
const TAB_OR_NEWLINE = /[\t\n\r]/

/**
 * `format: uri` as zod's `url()` without options decides it (`URL.canParse` of the trimmed text), for a URL zod
 * keeps as written: nothing to trim at its edges and no tab or newline (zod deletes those, as the URL parser does).
 * The generator refuses a `url()` with options (normalize, hostname, protocol), which this rule would not follow.
 */
function isUnchangedUri(text: string): boolean {
  return text === text.trim() && !TAB_OR_NEWLINE.test(text) && URL.canParse(text)
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
  if (!isZodPlainObject(value) || !hasNoProtoMember(value)) return false
  for (const key of Object.getOwnPropertySymbols(value)) {
    if (Object.prototype.propertyIsEnumerable.call(value, key)) return false
  }
  return true
}

/**
 * zod's own test of a plain object (`util.isPlainObject`, which `record()` applies), restated because importing it
 * loads all of zod's core: not an array, and either no callable constructor or one whose prototype is an object
 * with an own `isPrototypeOf` (as `Object.prototype` has).
 */
function isZodPlainObject(value: object): boolean {
  if (Array.isArray(value)) return false
  const constructor: unknown = (value as {constructor?: unknown}).constructor
  if (typeof constructor !== 'function') return true
  const prototype: unknown = constructor.prototype
  return (
    typeof prototype === 'object' &&
    prototype !== null &&
    !Array.isArray(prototype) &&
    Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf')
  )
}
