import {SECRET_NAME_PATTERN} from '../definition/secret-refs.js'

/** Largest value of one secret, in UTF-8 bytes. */
export const MAX_VALUE_BYTES = 64 * 1024

/** Why a name or a value cannot be stored, or undefined when it can; shared by the client and the service. */
export function secretProblem(name: string, value: unknown): {code: string; message: string} | undefined {
  if (!SECRET_NAME_PATTERN.test(name)) {
    return {
      code: 'invalid_name',
      message: `"${printable(name)}" is not a valid secret name: use letters, digits, "_", "." and "-", start with a letter or "_", at most 128 characters`,
    }
  }
  if (typeof value !== 'string') return {code: 'invalid_value', message: `the value of ${name} must be a string`}
  // A lone UTF-16 surrogate has no UTF-8 form: stored, it would silently become U+FFFD.
  if (!(value as string & {isWellFormed(): boolean}).isWellFormed()) {
    return {code: 'invalid_value', message: `the value of ${name} is not valid Unicode (it has a lone surrogate)`}
  }
  const size = Buffer.byteLength(value, 'utf8')
  if (size > MAX_VALUE_BYTES) {
    return {
      code: 'value_too_large',
      message: `the value of ${name} is ${size} bytes; the limit is ${MAX_VALUE_BYTES} bytes (64 KiB)`,
    }
  }
  return undefined
}

/** A name cut short and with control characters escaped, safe to echo back in an error. */
function printable(name: string): string {
  const short = name.length > 140 ? `${name.slice(0, 140)}…` : name
  return JSON.stringify(short).slice(1, -1)
}
