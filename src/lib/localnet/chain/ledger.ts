/**
 * Account state read from and written to litesvm, and an overlay that buffers writes so a transaction the
 * localnet executes itself is applied whole or not at all.
 */
import {PublicKey, SystemProgram} from '@solana/web3.js'
// litesvm's native class, which takes and gives raw 32-byte keys: its @solana/kit wrapper converts every
// address through base58, which cost more than running the transaction.
import {Account, type LiteSvm} from 'litesvm/dist/internal.js'

export interface AccountState {
  lamports: bigint
  owner: PublicKey
  data: Buffer
  executable: boolean
}

const SYSTEM = SystemProgram.programId.toBytes()

/** Reads an account from litesvm; null when it does not exist (zero lamports). */
export function readAccount(svm: LiteSvm, key: PublicKey): AccountState | null {
  const found = svm.getAccount(key.toBytes())
  return found && found.lamports() > 0n ? toState(found) : null
}

/** Our view of one of litesvm's accounts. */
export function toState(account: Account): AccountState {
  return {
    lamports: account.lamports(),
    owner: new PublicKey(account.owner()),
    data: Buffer.from(account.data()),
    executable: account.executable(),
  }
}

/** Writes an account into litesvm; null deletes it (an account with zero lamports does not exist). */
export function writeAccount(svm: LiteSvm, key: PublicKey, state: AccountState | null): void {
  const account = state
    ? new Account(state.lamports, state.data, state.owner.toBytes(), state.executable, 0n)
    : new Account(0n, new Uint8Array(), SYSTEM, false, 0n)
  svm.setAccount(key.toBytes(), account)
}

/** Buffered writes over litesvm's state, committed together. */
export class Overlay {
  // Keyed by the key's bytes in hex: cheaper than base58 on this hot path.
  private readonly writes = new Map<string, {key: PublicKey; state: AccountState | null}>()

  constructor(private readonly svm: LiteSvm) {}

  get(key: PublicKey): AccountState | null {
    const written = this.writes.get(key.toBuffer().toString('hex'))
    if (!written) return readAccount(this.svm, key)
    return written.state && {...written.state, data: Buffer.from(written.state.data)}
  }

  set(key: PublicKey, state: AccountState | null): void {
    this.writes.set(key.toBuffer().toString('hex'), {key, state: state && state.lamports > 0n ? state : null})
  }

  /** Writes every buffered change into litesvm and returns the accounts changed. */
  commit(): PublicKey[] {
    for (const {key, state} of this.writes.values()) writeAccount(this.svm, key, state)
    return [...this.writes.values()].map((w) => w.key)
  }
}
