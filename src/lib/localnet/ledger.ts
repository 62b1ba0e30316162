/**
 * Account state read from and written to litesvm, and an overlay that buffers writes so a transaction the
 * localnet executes itself is applied whole or not at all.
 */
import {type Address, address, lamports} from '@solana/kit'
import {PublicKey, SystemProgram} from '@solana/web3.js'
import type {LiteSVM} from 'litesvm'

export interface AccountState {
  lamports: bigint
  owner: PublicKey
  data: Buffer
  executable: boolean
}

const SYSTEM = address(SystemProgram.programId.toBase58())

/** Reads an account from litesvm; null when it does not exist (zero lamports). */
export function readAccount(svm: LiteSVM, key: PublicKey | string): AccountState | null {
  const found = svm.getAccount(toAddress(key))
  if (!found.exists) return null
  return {
    lamports: BigInt(found.lamports),
    owner: new PublicKey(found.programAddress),
    data: Buffer.from(found.data),
    executable: found.executable,
  }
}

/** Writes an account into litesvm; null deletes it (an account with zero lamports does not exist). */
export function writeAccount(svm: LiteSVM, key: PublicKey | string, state: AccountState | null): void {
  const data = state?.data ?? new Uint8Array()
  svm.setAccount({
    address: toAddress(key),
    lamports: lamports(state?.lamports ?? 0n),
    programAddress: state ? address(state.owner.toBase58()) : SYSTEM,
    executable: state?.executable ?? false,
    data,
    space: BigInt(data.length),
  })
}

function toAddress(key: PublicKey | string): Address {
  return address(typeof key === 'string' ? key : key.toBase58())
}

/** Buffered writes over litesvm's state, committed together. */
export class Overlay {
  private readonly writes = new Map<string, AccountState | null>()

  constructor(private readonly svm: LiteSVM) {}

  get(key: PublicKey): AccountState | null {
    const k = key.toBase58()
    if (this.writes.has(k)) {
      const state = this.writes.get(k)!
      return state && {...state, data: Buffer.from(state.data)}
    }
    return readAccount(this.svm, k)
  }

  set(key: PublicKey, state: AccountState | null): void {
    this.writes.set(key.toBase58(), state && state.lamports > 0n ? state : null)
  }

  /** Writes every buffered change into litesvm and returns the addresses changed. */
  commit(): string[] {
    for (const [key, state] of this.writes) writeAccount(this.svm, key, state)
    return [...this.writes.keys()]
  }
}
