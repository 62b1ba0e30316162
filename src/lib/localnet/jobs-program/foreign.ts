/**
 * Accounts of other programs the jobs program reads (reference section 2.6): the staking program's
 * StakeAccount, the rewards program's ReflectionAccount and Metaplex metadata of an access NFT.
 */
import {PublicKey} from '@solana/web3.js'

import {BorshReader, BorshWriter} from '../../market/codec/borsh.js'
import {accountDiscriminator} from '../../market/codec/discriminator.js'
import {METADATA_PROGRAM_ID} from './context.js'

export const STAKE_ACCOUNT_DISCRIMINATOR = accountDiscriminator('StakeAccount')
export const REFLECTION_ACCOUNT_DISCRIMINATOR = accountDiscriminator('ReflectionAccount')
/** Allocated size of a StakeAccount (Borsh 113). */
export const STAKE_ACCOUNT_SPACE = 120
/** A ReflectionAccount: discriminator, rate, total_reflection, total_xnos (u128), vault, vault_bump. */
export const REFLECTION_ACCOUNT_SPACE = 8 + 16 * 3 + 32 + 1

export interface StakeAccount {
  amount: bigint
  authority: PublicKey
  duration: bigint
  timeUnstake: bigint
  vault: PublicKey
  vaultBump: number
  xnos: bigint
}

/** Decodes a StakeAccount (throws RangeError when truncated). */
export function decodeStakeAccount(data: Uint8Array): StakeAccount {
  const r = new BorshReader(data, 8)
  return {
    amount: r.u64(),
    authority: r.publicKey(),
    duration: r.u64(),
    timeUnstake: r.i64(),
    vault: r.publicKey(),
    vaultBump: r.u8(),
    xnos: r.u128(),
  }
}

/** Encodes a StakeAccount at its allocated size. */
export function encodeStakeAccount(stake: StakeAccount): Buffer {
  return new BorshWriter()
    .fixed(STAKE_ACCOUNT_DISCRIMINATOR, 8)
    .u64(stake.amount)
    .publicKey(stake.authority)
    .u64(stake.duration)
    .i64(stake.timeUnstake)
    .publicKey(stake.vault)
    .u8(stake.vaultBump)
    .u128(stake.xnos)
    .bytes(STAKE_ACCOUNT_SPACE)
}

/** The Metaplex metadata account of a mint: PDA ["metadata", program, mint]. */
export function findMetadataAddress(mint: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync(
    [Buffer.from('metadata'), METADATA_PROGRAM_ID.toBuffer(), mint.toBuffer()],
    METADATA_PROGRAM_ID,
  )[0]
}

/**
 * The verified collection of a MetadataV1 account, or null when it has none, is not MetadataV1, or does not
 * decode (the program then treats the collection as absent).
 */
export function verifiedCollection(data: Uint8Array): PublicKey | null {
  try {
    const r = new BorshReader(data, 0)
    if (r.u8() !== 4) return null
    r.fixed(64) // update authority, mint
    for (let i = 0; i < 3; i++) r.fixed(new DataView(r.fixed(4).buffer).getUint32(0, true)) // name, symbol, uri
    r.fixed(2) // seller fee basis points
    if (r.u8() === 1) r.fixed(new DataView(r.fixed(4).buffer).getUint32(0, true) * 34) // creators
    r.fixed(2) // primary sale happened, is mutable
    if (r.u8() === 1) r.u8() // edition nonce
    if (r.u8() === 1) r.u8() // token standard
    if (r.u8() !== 1) return null
    const verified = r.u8() === 1
    const key = r.publicKey()
    return verified ? key : null
  } catch {
    return null
  }
}
