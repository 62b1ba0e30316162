import {createHash} from 'node:crypto'

/** Anchor's 8-byte discriminator: the first bytes of sha256("<namespace>:<name>"). */
function discriminator(preimage: string): Buffer {
  return createHash('sha256').update(preimage).digest().subarray(0, 8)
}

/** Discriminator of an account type, e.g. `accountDiscriminator('JobAccount')`. */
export function accountDiscriminator(name: string): Buffer {
  return discriminator(`account:${name}`)
}

/** Discriminator of an instruction; Anchor hashes the Rust (snake_case) name, e.g. `closeAdmin` → `close_admin`. */
export function instructionDiscriminator(name: string): Buffer {
  return discriminator(`global:${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`)
}
