// Untrusted text as a web3.js key, by base58-text.ts's rule (apart, so that rule stays free of web3.js).
import {PublicKey} from '@solana/web3.js'

import {decodeBase58} from '../text/base58-text.js'

/** The key a text names, or null when it names none (checked before it is decoded). */
export function parseKey(text: unknown): PublicKey | null {
  const bytes = decodeBase58(text, 'key')
  return bytes ? new PublicKey(bytes) : null
}
