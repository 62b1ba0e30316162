/**
 * `getTransaction`'s answer for a transaction the localnet has seen, in the shape of Solana's RPC documentation:
 * `{slot, blockTime, version, meta, transaction}`, the transaction as `json` (its message decoded) or as
 * `base64`/`base58` wire bytes. Token balances and inner instructions are not recorded (empty lists).
 */
import {VersionedTransaction} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'

import type {TransactionRecord} from '../chain.js'

const ENCODINGS = ['json', 'jsonParsed', 'base64', 'base58']

/** The `getTransaction` result for `record`, or the RPC error for an unsupported version or encoding. */
export function transactionResult(
  record: TransactionRecord,
  config: {encoding?: unknown; maxSupportedTransactionVersion?: unknown},
): {result: unknown} | {error: {code: number; message: string}} {
  const encoding = config.encoding ?? 'json'
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding)) {
    return error(
      -32602,
      `Invalid params: unknown variant \`${String(encoding).slice(0, 64)}\`, expected one of ${ENCODINGS.map((e) => `\`${e}\``).join(', ')}`,
    )
  }
  const max = config.maxSupportedTransactionVersion
  if (record.version !== 'legacy' && (max === undefined || max === null || Number(max) < record.version)) {
    return error(
      -32015,
      `Transaction version (${record.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${record.version}`,
    )
  }
  const accountKeys = record.accounts.map((a) => a.pubkey.toBase58())
  const staticCount = accountKeys.length - record.loaded.writable - record.loaded.readonly
  const meta = {
    err: record.err,
    status: record.err ? {Err: record.err} : {Ok: null},
    fee: Number(record.fee),
    preBalances: record.preBalances.map(Number),
    postBalances: record.postBalances.map(Number),
    innerInstructions: [],
    logMessages: record.logs,
    preTokenBalances: [],
    postTokenBalances: [],
    rewards: [],
    loadedAddresses: {
      writable: accountKeys.slice(staticCount, staticCount + record.loaded.writable),
      readonly: accountKeys.slice(staticCount + record.loaded.writable),
    },
    computeUnitsConsumed: record.unitsConsumed,
  }
  return {
    result: {
      slot: record.slot,
      blockTime: record.blockTime,
      ...(max === undefined ? {} : {version: record.version}),
      meta: record.version === 'legacy' ? withoutLoaded(meta) : meta,
      transaction: encodeTransaction(record, encoding, accountKeys.slice(0, staticCount)),
    },
  }
}

function error(code: number, message: string): {error: {code: number; message: string}} {
  return {error: {code, message}}
}

/** A legacy transaction's meta has no `loadedAddresses`: it cannot load any. */
function withoutLoaded<T extends {loadedAddresses?: unknown}>(meta: T): Omit<T, 'loadedAddresses'> {
  const rest = {...meta}
  delete rest.loadedAddresses
  return rest
}

function encodeTransaction(record: TransactionRecord, encoding: string, staticKeys: string[]): unknown {
  if (encoding === 'base64') return [Buffer.from(record.raw).toString('base64'), 'base64']
  if (encoding === 'base58') return [base58btc.baseEncode(record.raw), 'base58']
  const tx = VersionedTransaction.deserialize(record.raw)
  const {message} = tx
  return {
    signatures: tx.signatures.map((s) => base58btc.baseEncode(s)),
    message: {
      accountKeys: staticKeys,
      header: message.header,
      recentBlockhash: message.recentBlockhash,
      instructions: message.compiledInstructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: ix.accountKeyIndexes,
        data: base58btc.baseEncode(ix.data),
        stackHeight: null,
      })),
      ...(record.version === 'legacy'
        ? {}
        : {
            addressTableLookups: message.addressTableLookups.map((l) => ({
              accountKey: l.accountKey.toBase58(),
              writableIndexes: l.writableIndexes,
              readonlyIndexes: l.readonlyIndexes,
            })),
          }),
    },
  }
}
