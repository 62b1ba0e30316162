/** One stored secret: its name and its value sealed by the service's cipher (never plaintext here). */
export interface SealedSecret {
  name: string
  sealed: Buffer
}

/**
 * Where the service keeps secrets and used login signatures. SQLite is the embedded default; PostgreSQL lets
 * several instances share one database, which is why login replays are tracked here and not in memory.
 */
export interface SecretStorage {
  /** The owner's secrets, sorted by name; only `names` when given. */
  list(owner: string, names?: readonly string[]): Promise<SealedSecret[]>
  /** Inserts or replaces secrets in one transaction; refuses (changing nothing) beyond `maxPerOwner` in all. */
  put(owner: string, secrets: readonly SealedSecret[], maxPerOwner: number): Promise<void>
  /** Deletes one secret; false when it did not exist. */
  delete(owner: string, name: string): Promise<boolean>
  /** Records a login signature; false when it was already used. Forgets signatures past `expiresAt` (unix s). */
  claimSignature(signature: string, expiresAt: number, now: number): Promise<boolean>
  /** Answers when the storage can serve (health checks). */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Thrown by `put` when the owner would hold more secrets than allowed. */
export class OwnerLimitError extends Error {
  constructor(readonly limit: number) {
    super(`an owner may hold at most ${limit} secrets`)
    this.name = 'OwnerLimitError'
  }
}
