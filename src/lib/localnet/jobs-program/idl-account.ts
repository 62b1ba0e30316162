/**
 * The jobs program's Anchor IDL account, which the network's SDK reads before every jobs call: at
 * createWithSeed(findProgramAddress([], program), "anchor:idl", program), Anchor's layout (discriminator,
 * authority, u32 length, zlib-deflated IDL JSON), holding the reference IDL.
 */
import {PublicKey} from '@solana/web3.js'
import {createHash} from 'node:crypto'
import {deflateSync} from 'node:zlib'

import {accountDiscriminator} from '../../market/codec/discriminator.js'
import idl from './idl.json' with {type: 'json'}

/** The address of a program's Anchor IDL account. */
export function idlAddress(programId: PublicKey): PublicKey {
  const [base] = PublicKey.findProgramAddressSync([], programId)
  // createWithSeed is sha256(base || seed || owner); web3.js offers it only as a promise.
  return new PublicKey(
    createHash('sha256')
      .update(Buffer.concat([base.toBuffer(), Buffer.from('anchor:idl'), programId.toBuffer()]))
      .digest(),
  )
}

/** The IDL account's data: Anchor's `IdlAccount` with `authority` and the deflated reference IDL. */
export function idlAccountData(authority: PublicKey): Buffer {
  const deflated = deflateSync(Buffer.from(JSON.stringify(idl)))
  const length = Buffer.alloc(4)
  length.writeUInt32LE(deflated.length)
  return Buffer.concat([accountDiscriminator('IdlAccount'), authority.toBuffer(), length, deflated])
}
