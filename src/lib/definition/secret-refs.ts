import {visitStrings} from './paths.js'

/** Names a secret may have: letters, digits, `_`, `.` and `-`, starting with a letter or `_`, at most 128 long. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/

/** A reference to one of the poster's secrets inside any string of a definition: `%%secrets.NAME%%`. */
export const SECRET_REFERENCE = /%%secrets\.([A-Za-z_][A-Za-z0-9_.-]{0,127})%%/g

/** Text that was probably meant as a reference but is not one (`%%secret.X%%`, `%%secrets.%%`, a missing `%%`). */
const NEAR_REFERENCE = /%%\s*secrets?\b[^%]*%?%?/gi

/** The reference text for a secret name. */
export function secretReference(name: string): string {
  return `%%secrets.${name}%%`
}

/** True when the whole string is secret references and nothing written inline. */
export function isOnlySecretReferences(text: string): boolean {
  return hasSecretReference(text) && text.replace(SECRET_REFERENCE, '').trim() === ''
}

/** True when the string contains at least one secret reference. */
export function hasSecretReference(text: string): boolean {
  SECRET_REFERENCE.lastIndex = 0
  const found = SECRET_REFERENCE.test(text)
  SECRET_REFERENCE.lastIndex = 0
  return found
}

/** Fragments of a string that look like a secret reference but are malformed. */
export function malformedSecretReferences(text: string): string[] {
  if (!/%%\s*secret/i.test(text)) return []
  const valid = text.replace(SECRET_REFERENCE, '')
  return [...valid.matchAll(NEAR_REFERENCE)].map((m) => m[0])
}

/** Every secret name a definition refers to, sorted and without repeats (any string value, at any depth). */
export function findSecretReferences(definition: unknown): string[] {
  const names = new Set<string>()
  visitStrings(definition, (text) => {
    for (const match of text.matchAll(SECRET_REFERENCE)) names.add(match[1] as string)
  })
  return [...names].sort()
}
