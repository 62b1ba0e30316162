/**
 * CIDv0 of a file exactly as `ipfs add` computes it with its defaults (CIDv0, 256 KiB fixed-size chunks,
 * balanced DAG of at most 174 links per node, UnixFS file nodes in dag-pb for leaves too).
 */
import {createHash} from 'node:crypto'
import {setImmediate as yieldToLoop} from 'node:timers/promises'

import * as dagPb from '@ipld/dag-pb'
import {UnixFS} from 'ipfs-unixfs'
import {CID} from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'

const CHUNK_SIZE = 262_144
const MAX_CHILDREN = 174
const SHA2_256 = 0x12

interface DagNode {
  cid: CID
  /** Bytes of the file under this node. */
  fileSize: bigint
  /** Bytes of this node's block plus all blocks under it (a link's Tsize). */
  cumulativeSize: number
}

function block(bytes: Uint8Array, cumulativeChildren: number): {cid: CID; size: number} {
  const digest = Digest.create(SHA2_256, createHash('sha256').update(bytes).digest())
  return {cid: CID.createV0(digest), size: bytes.length + cumulativeChildren}
}

function leaf(data: Uint8Array): DagNode {
  if (data.length === 0) {
    const {cid, size} = block(dagPb.encode(dagPb.prepare({Data: new UnixFS({type: 'file'}).marshal()})), 0)
    return {cid, fileSize: 0n, cumulativeSize: size}
  }
  // The block is `dagPb.encode({Data: UnixFS{Type: file, Data: data, filesize}.marshal()})`, hashed around the
  // data rather than copied twice into a new block: 64 MiB of such copies cost the localnet 100 ms GC pauses.
  const n = varint(data.length)
  const unixfsLength = 2 + 1 + n.length + data.length + 1 + n.length
  const head = Buffer.from([0x0a, ...varint(unixfsLength), 0x08, 0x02, 0x12, ...n])
  const tail = Buffer.from([0x18, ...n])
  const hash = createHash('sha256').update(head).update(data).update(tail).digest()
  const cid = CID.createV0(Digest.create(SHA2_256, hash))
  return {cid, fileSize: BigInt(data.length), cumulativeSize: head.length + data.length + tail.length}
}

/** A protobuf varint. */
function varint(value: number): number[] {
  const bytes: number[] = []
  for (; value >= 0x80; value = Math.floor(value / 0x80)) bytes.push((value % 0x80) | 0x80)
  bytes.push(value)
  return bytes
}

function parent(children: DagNode[]): DagNode {
  const unixfs = new UnixFS({type: 'file'})
  for (const child of children) unixfs.addBlockSize(child.fileSize)
  const links = children.map((c) => ({Hash: c.cid, Name: '', Tsize: c.cumulativeSize}))
  const linked = children.reduce((sum, c) => sum + c.cumulativeSize, 0)
  const {cid, size} = block(dagPb.encode(dagPb.prepare({Data: unixfs.marshal(), Links: links})), linked)
  return {cid, fileSize: children.reduce((sum, c) => sum + c.fileSize, 0n), cumulativeSize: size}
}

/** The CIDv0 ("Qm...") and DAG size (the `Size` that `ipfs add` reports) of a file's bytes. */
export function computeCidV0(bytes: Uint8Array): {cid: string; size: number} {
  const steps = cidSteps(bytes)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/**
 * The same CID, computed in steps of at most 1 MiB hashed with the loop yielded to between them, so a 64 MiB
 * upload (half a second of hashing) never holds a server's other requests.
 */
export async function computeCidV0Yielding(bytes: Uint8Array): Promise<{cid: string; size: number}> {
  const steps = cidSteps(bytes)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
    await yieldToLoop()
  }
}

/** Leaves hashed between two yields of cidSteps: 1 MiB, about 8 ms. */
const LEAVES_PER_STEP = 4

/** The CID computation, yielding after every LEAVES_PER_STEP leaves; one computation for both drivers above. */
function* cidSteps(bytes: Uint8Array): Generator<void, {cid: string; size: number}> {
  let level: DagNode[] = []
  for (let offset = 0; offset < bytes.length || level.length === 0; offset += CHUNK_SIZE) {
    level.push(leaf(bytes.subarray(offset, offset + CHUNK_SIZE)))
    if (level.length % LEAVES_PER_STEP === 0) yield
  }
  // The balanced layout: a single chunk is the root; otherwise group up to 174 per parent until one remains.
  while (level.length > 1) {
    const next: DagNode[] = []
    for (let i = 0; i < level.length; i += MAX_CHILDREN) next.push(parent(level.slice(i, i + MAX_CHILDREN)))
    level = next
  }
  const root = level[0]!
  return {cid: root.cid.toString(), size: root.cumulativeSize}
}
