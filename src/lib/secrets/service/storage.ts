/** One stored secret: its name and its value sealed by the service's cipher (never plaintext here). */
export interface SealedSecret {
  name: string
  sealed: Buffer
}

/**
 * How much may be stored. A secret's size is what it occupies: its name plus its sealed value (the value and 29
 * bytes of nonce, tag and format).
 */
export interface Quota {
  secretsPerOwner: number
  bytesPerOwner: number
  /** All owners together, in this database. */
  totalBytes: number
}

/**
 * Where the service keeps secrets and used login signatures. SQLite is the embedded default; PostgreSQL lets
 * several instances share one database, which is why login replays are tracked here and not in memory.
 */
export interface SecretStorage {
  /** The owner's secrets, sorted by name; only `names` when given. */
  list(owner: string, names?: readonly string[]): Promise<SealedSecret[]>
  /** Inserts or replaces secrets in one transaction, durable once it resolves; refuses (changing nothing) beyond `quota`. */
  put(owner: string, secrets: readonly SealedSecret[], quota: Quota): Promise<void>
  /** Deletes one secret; false when it did not exist. */
  delete(owner: string, name: string): Promise<boolean>
  /**
   * Records a login signature made for the timestamp `signedAt`; false when it was already used. Signatures
   * older than `keepSeconds` at `now` (unix s) are forgotten: the clock check refuses them anyway.
   */
  claimSignature(signature: string, signedAt: number, now: number, keepSeconds: number): Promise<boolean>
  /** Answers when the storage can serve (health checks). */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Thrown by `put` when the owner or the database would hold more than its quota allows. */
export class QuotaError extends Error {
  constructor(
    readonly kind: keyof Quota,
    readonly limit: number,
  ) {
    super(`quota ${kind} (${limit}) exceeded`)
    this.name = 'QuotaError'
  }
}

/** Thrown by a write the database stayed too busy for (other processes writing to the same file): answered 503. */
export class StorageBusyError extends Error {
  constructor() {
    super('the database is busy')
    this.name = 'StorageBusyError'
  }
}

/** Checks an owner's usage after a write, and the database's total when the write grew it. */
export function checkQuota(
  quota: Quota,
  owner: {secrets: number; bytes: number},
  total: {before: number; growth: number},
): void {
  if (owner.secrets > quota.secretsPerOwner) throw new QuotaError('secretsPerOwner', quota.secretsPerOwner)
  if (owner.bytes > quota.bytesPerOwner) throw new QuotaError('bytesPerOwner', quota.bytesPerOwner)
  if (total.growth > 0 && total.before + total.growth > quota.totalBytes)
    throw new QuotaError('totalBytes', quota.totalBytes)
}
