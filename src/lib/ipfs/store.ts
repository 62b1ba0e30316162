/** A content-addressed file store on disk: files kept whole under their CIDv0. */
import {existsSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {computeCidV0} from './cid.js'

const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/

export class ContentStore {
  constructor(private readonly dir: string) {
    mkdirSync(dir, {recursive: true})
  }

  /** Stores the bytes and returns their CIDv0 and DAG size, as `ipfs add` reports them. */
  add(bytes: Uint8Array): {cid: string; size: number} {
    const added = computeCidV0(bytes)
    const path = join(this.dir, added.cid)
    if (!existsSync(path)) {
      writeFileSync(`${path}.tmp`, bytes)
      renameSync(`${path}.tmp`, path)
    }
    return added
  }

  /** The bytes stored under a CID; null when unknown or not a CIDv0. */
  get(cid: string): Buffer | null {
    if (!CID_V0.test(cid)) return null
    const path = join(this.dir, cid)
    return existsSync(path) ? readFileSync(path) : null
  }
}
