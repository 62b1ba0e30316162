/**
 * The jobs program's accounts, laid out byte for byte as in reference/jobs-program-idl.json: an 8-byte Anchor
 * discriminator, then the fields in IDL order in Borsh.
 */
import {PublicKey} from '@solana/web3.js'

import {BorshReader, BorshWriter} from './borsh.js'
import {accountDiscriminator} from './discriminator.js'

/** Job states as stored on chain; RUNNING is never stored (a queued job with a RunAccount is running). */
export const JobState = {QUEUED: 0, DONE: 2, STOPPED: 3} as const
/** What the market queue holds. */
export const QueueType = {JOB: 0, NODE: 1, EMPTY: 255} as const
/** The most keys a market queue holds. */
export const MARKET_QUEUE_LENGTH = 314

export const JOB_ACCOUNT_DISCRIMINATOR = accountDiscriminator('JobAccount')
export const MARKET_ACCOUNT_DISCRIMINATOR = accountDiscriminator('MarketAccount')
export const RUN_ACCOUNT_DISCRIMINATOR = accountDiscriminator('RunAccount')

/** Sizes the program allocates (discriminator included); the market reserves room for a full queue. */
export const JOB_ACCOUNT_SIZE = 8 + 32 + 32 + 32 + 32 + 32 + 8 + 32 + 1 + 8 + 8 + 8
export const RUN_ACCOUNT_SIZE = 8 + 32 + 32 + 32 + 1 + 8
export const MARKET_ACCOUNT_SIZE = 8 + 32 + 8 + 8 + 8 + 1 + 32 + 1 + 32 + 16 + 1 + 4 + 32 * MARKET_QUEUE_LENGTH

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

/** Thrown when bytes are not an account of the expected type. */
export class AccountDecodeError extends Error {
  override name = 'AccountDecodeError'
}

function reader(data: Uint8Array, discriminator: Buffer, name: string): BorshReader {
  if (data.length < 8 || !Buffer.from(data.subarray(0, 8)).equals(discriminator)) {
    throw new AccountDecodeError(`not a ${name}: discriminator mismatch`)
  }
  return new BorshReader(data, 8)
}

/** Decodes a MarketAccount's bytes. */
export function decodeMarketAccount(data: Uint8Array): MarketAccount {
  const r = reader(data, MARKET_ACCOUNT_DISCRIMINATOR, 'MarketAccount')
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
    queue: r.publicKeyVec(),
  }
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

/** Encodes a JobAccount. */
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

/** Encodes a RunAccount. */
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
