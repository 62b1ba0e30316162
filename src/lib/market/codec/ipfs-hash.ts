/**
 * The program stores a content id as the 32-byte sha256 digest of a CIDv0: the base58 multihash without its
 * 0x12 0x20 (sha2-256, 32 bytes) prefix.
 */
import {base58btc} from 'multiformats/bases/base58'

const PREFIX = [0x12, 0x20]

/** The 32 bytes a JobAccount stores for a CIDv0 ("Qm..."). */
export function ipfsHashToBytes(cid: string): Uint8Array {
  let multihash: Uint8Array
  try {
    multihash = base58btc.baseDecode(cid)
  } catch {
    throw new RangeError(`not a CIDv0 (base58): ${cid}`)
  }
  if (multihash.length !== 34 || multihash[0] !== PREFIX[0] || multihash[1] !== PREFIX[1]) {
    throw new RangeError(`not a CIDv0 (sha2-256 multihash): ${cid}`)
  }
  return multihash.subarray(2)
}

/** The CIDv0 for 32 bytes read from a JobAccount. */
export function bytesToIpfsHash(digest: Uint8Array): string {
  if (digest.length !== 32) throw new RangeError(`expected a 32-byte digest, got ${digest.length} bytes`)
  return base58btc.baseEncode(Uint8Array.from([...PREFIX, ...digest]))
}
