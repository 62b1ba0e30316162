/** A content-addressed file store on disk: files kept whole under their CIDv0, up to a set disk use. */
import {existsSync, mkdirSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {rename, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {computeCidV0Yielding} from './cid.js'

const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/

/** The disk a localnet's content store may use unless told otherwise (`localnet start --content-max-bytes`). */
export const DEFAULT_CONTENT_MAX_BYTES = 2 * 1024 ** 3

/** Refused: storing the bytes would take the store past its disk use. */
export class ContentStoreFullError extends Error {
  override name = 'ContentStoreFullError'
}

export class ContentStore {
  /** Bytes of the files stored, and of those being written. */
  private used = 0
  /** Adds under way, by CID: a second upload of the same bytes waits for the first rather than writing twice. */
  private readonly writing = new Map<string, Promise<void>>()
  private writes = 0

  constructor(
    private readonly dir: string,
    /** The most bytes its files may hold in all. */
    readonly maxBytes = DEFAULT_CONTENT_MAX_BYTES,
  ) {
    mkdirSync(dir, {recursive: true})
    for (const name of readdirSync(dir)) if (CID_V0.test(name)) this.used += statSync(join(dir, name)).size
  }

  /**
   * Stores the bytes and returns their CIDv0 and DAG size, as `ipfs add` reports them. The CID is computed and
   * the file written without holding the loop; ContentStoreFullError past `maxBytes`.
   */
  async add(bytes: Uint8Array): Promise<{cid: string; size: number}> {
    const added = await computeCidV0Yielding(bytes)
    const path = join(this.dir, added.cid)
    const pending = this.writing.get(added.cid)
    if (pending) await pending
    else if (!existsSync(path)) {
      if (this.used + bytes.length > this.maxBytes) {
        throw new ContentStoreFullError(
          `the content store holds at most ${this.maxBytes} bytes, and ${bytes.length} more would pass it`,
        )
      }
      this.used += bytes.length
      const write = this.write(path, bytes).catch((error: unknown) => {
        this.used -= bytes.length
        throw error
      })
      this.writing.set(added.cid, write)
      try {
        await write
      } finally {
        this.writing.delete(added.cid)
      }
    }
    return added
  }

  /** The bytes stored under a CID; null when unknown or not a CIDv0. */
  get(cid: string): Buffer | null {
    if (!CID_V0.test(cid)) return null
    const path = join(this.dir, cid)
    return existsSync(path) ? readFileSync(path) : null
  }

  private async write(path: string, bytes: Uint8Array): Promise<void> {
    // Its own temporary name, then renamed: a reader never sees half a file.
    const temporary = `${path}.${process.pid}.${this.writes++}.tmp`
    try {
      await writeFile(temporary, bytes)
      await rename(temporary, path)
    } catch (error) {
      await rm(temporary, {force: true})
      throw error
    }
  }
}
