/**
 * The jobs program's accounts, laid out byte for byte as in reference/jobs-program-idl.json: an 8-byte Anchor
 * discriminator, then the fields in IDL order in Borsh. The program allocates 8 + the Rust struct's in-memory size
 * (alignment included), so an account is longer than its Borsh content: the rest is zero and ignored when read.
 */
import {PublicKey} from '@solana/web3.js'

import {BorshReader, BorshWriter} from './borsh.js'
import {
  AccountDecodeError,
  JOB_ACCOUNT_DISCRIMINATOR,
  MARKET_ACCOUNT_DISCRIMINATOR,
  RUN_ACCOUNT_DISCRIMINATOR,
} from './account-layout.js'

export {
  AccountDecodeError,
  JOB_ACCOUNT_DISCRIMINATOR,
  JobState,
  MARKET_ACCOUNT_DISCRIMINATOR,
  RUN_ACCOUNT_DISCRIMINATOR,
} from './account-layout.js'
/** What the market queue holds. */
export const QueueType = {JOB: 0, NODE: 1, EMPTY: 255} as const
/** The most keys a market queue holds. */
export const MARKET_QUEUE_LENGTH = 314

/** Bytes of an account's Borsh content (discriminator included); the market's with an empty queue. */
export const JOB_ACCOUNT_DATA_SIZE = 8 + 32 + 32 + 32 + 32 + 32 + 8 + 32 + 1 + 8 + 8 + 8
export const RUN_ACCOUNT_DATA_SIZE = 8 + 32 + 32 + 32 + 1 + 8
export const MARKET_ACCOUNT_DATA_SIZE = 8 + 32 + 8 + 8 + 8 + 1 + 32 + 1 + 32 + 16 + 1 + 4

/**
 * Sizes the program allocates on chain (reference/jobs-program-constraints.md 2.1): 8 + the struct's size on the
 * SBF target, where every field is 1- or 8-byte aligned and u128 is 8-byte aligned, rounded up to 8. Rent is paid
 * on these; the market's room for 314 queued keys comes after the struct.
 */
export const JOB_ACCOUNT_SIZE = 8 + alignTo8(JOB_ACCOUNT_DATA_SIZE - 8)
export const RUN_ACCOUNT_SIZE = 8 + alignTo8(RUN_ACCOUNT_DATA_SIZE - 8)
/** The struct holds the queue as a Vec (24 bytes: pointer, capacity, length) instead of Borsh's u32 length. */
export const MARKET_ACCOUNT_SIZE = 8 + alignTo8(MARKET_ACCOUNT_DATA_SIZE - 8 - 4 + 24) + 32 * MARKET_QUEUE_LENGTH

function alignTo8(n: number): number {
  return Math.ceil(n / 8) * 8
}

export interface MarketAccount {
  authority: PublicKey
  jobExpiration: bigint
  /** Token base units per second. */
  jobPrice: bigint
  /** Seconds. */
  jobTimeout: bigint
  jobType: number
  vault: PublicKey
  vaultBump: number
  /** The system program id when the market is open to any node. */
  nodeAccessKey: PublicKey
  nodeXnosMinimum: bigint
  queueType: number
  queue: PublicKey[]
}

export interface JobAccount {
  /** sha256 digest of the definition's CIDv0 (see ipfsHashToBytes). */
  ipfsJob: Uint8Array
  ipfsResult: Uint8Array
  market: PublicKey
  node: PublicKey
  payer: PublicKey
  price: bigint
  project: PublicKey
  state: number
  timeEnd: bigint
  timeStart: bigint
  timeout: bigint
}

export interface RunAccount {
  job: PublicKey
  node: PublicKey
  payer: PublicKey
  state: number
  time: bigint
}

function reader(data: Uint8Array, discriminator: Buffer, name: string): BorshReader {
  if (data.length < 8 || !Buffer.from(data.subarray(0, 8)).equals(discriminator)) {
    throw new AccountDecodeError(`not a ${name}: discriminator mismatch`)
  }
  return new BorshReader(data, 8)
}

/** A market without its queue's keys: what a listing reads (the first MARKET_ACCOUNT_DATA_SIZE bytes). */
export type MarketSummary = Omit<MarketAccount, 'queue'> & {queueLength: number}

function readMarketFields(r: BorshReader): MarketSummary {
  return {
    authority: r.publicKey(),
    jobExpiration: r.i64(),
    jobPrice: r.u64(),
    jobTimeout: r.i64(),
    jobType: r.u8(),
    vault: r.publicKey(),
    vaultBump: r.u8(),
    nodeAccessKey: r.publicKey(),
    nodeXnosMinimum: r.u128(),
    queueType: r.u8(),
    queueLength: r.u32(),
  }
}

/** Decodes a MarketAccount's bytes. */
export function decodeMarketAccount(data: Uint8Array): MarketAccount {
  const r = reader(data, MARKET_ACCOUNT_DISCRIMINATOR, 'MarketAccount')
  const {queueLength, ...fields} = readMarketFields(r)
  return {...fields, queue: Array.from({length: queueLength}, () => r.publicKey())}
}

/** Decodes a market's fields and queue length from its first MARKET_ACCOUNT_DATA_SIZE bytes or more. */
export function decodeMarketSummary(data: Uint8Array): MarketSummary {
  return readMarketFields(reader(data, MARKET_ACCOUNT_DISCRIMINATOR, 'MarketAccount'))
}

/** Encodes a MarketAccount at its allocated size. */
export function encodeMarketAccount(m: MarketAccount): Buffer {
  return new BorshWriter()
    .fixed(MARKET_ACCOUNT_DISCRIMINATOR, 8)
    .publicKey(m.authority)
    .i64(m.jobExpiration)
    .u64(m.jobPrice)
    .i64(m.jobTimeout)
    .u8(m.jobType)
    .publicKey(m.vault)
    .u8(m.vaultBump)
    .publicKey(m.nodeAccessKey)
    .u128(m.nodeXnosMinimum)
    .u8(m.queueType)
    .publicKeyVec(m.queue)
    .bytes(MARKET_ACCOUNT_SIZE)
}

/** Decodes a JobAccount's bytes. */
export function decodeJobAccount(data: Uint8Array): JobAccount {
  const r = reader(data, JOB_ACCOUNT_DISCRIMINATOR, 'JobAccount')
  return {
    ipfsJob: r.fixed(32),
    ipfsResult: r.fixed(32),
    market: r.publicKey(),
    node: r.publicKey(),
    payer: r.publicKey(),
    price: r.u64(),
    project: r.publicKey(),
    state: r.u8(),
    timeEnd: r.i64(),
    timeStart: r.i64(),
    timeout: r.i64(),
  }
}

/** Encodes a JobAccount at its allocated size. */
export function encodeJobAccount(j: JobAccount): Buffer {
  return new BorshWriter()
    .fixed(JOB_ACCOUNT_DISCRIMINATOR, 8)
    .fixed(j.ipfsJob, 32)
    .fixed(j.ipfsResult, 32)
    .publicKey(j.market)
    .publicKey(j.node)
    .publicKey(j.payer)
    .u64(j.price)
    .publicKey(j.project)
    .u8(j.state)
    .i64(j.timeEnd)
    .i64(j.timeStart)
    .i64(j.timeout)
    .bytes(JOB_ACCOUNT_SIZE)
}

/** Decodes a RunAccount's bytes. */
export function decodeRunAccount(data: Uint8Array): RunAccount {
  const r = reader(data, RUN_ACCOUNT_DISCRIMINATOR, 'RunAccount')
  return {job: r.publicKey(), node: r.publicKey(), payer: r.publicKey(), state: r.u8(), time: r.i64()}
}

/** Encodes a RunAccount at its allocated size. */
export function encodeRunAccount(run: RunAccount): Buffer {
  return new BorshWriter()
    .fixed(RUN_ACCOUNT_DISCRIMINATOR, 8)
    .publicKey(run.job)
    .publicKey(run.node)
    .publicKey(run.payer)
    .u8(run.state)
    .i64(run.time)
    .bytes(RUN_ACCOUNT_SIZE)
}
