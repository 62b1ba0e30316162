import {PublicKey} from '@solana/web3.js'

/** Appends Borsh-encoded values (little-endian integers, 32-byte keys, u32-prefixed vectors) to a growing buffer. */
export class BorshWriter {
  private chunks: Buffer[] = []

  u8(value: number): this {
    return this.push(Buffer.from([value]))
  }

  u64(value: bigint): this {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(value)
    return this.push(b)
  }

  i64(value: bigint): this {
    const b = Buffer.alloc(8)
    b.writeBigInt64LE(value)
    return this.push(b)
  }

  u128(value: bigint): this {
    const b = Buffer.alloc(16)
    b.writeBigUInt64LE(value & 0xffff_ffff_ffff_ffffn)
    b.writeBigUInt64LE(value >> 64n, 8)
    return this.push(b)
  }

  fixed(bytes: Uint8Array, length: number): this {
    if (bytes.length !== length) throw new RangeError(`expected ${length} bytes, got ${bytes.length}`)
    return this.push(Buffer.from(bytes))
  }

  publicKey(key: PublicKey): this {
    return this.push(key.toBuffer())
  }

  publicKeyVec(keys: PublicKey[]): this {
    const len = Buffer.alloc(4)
    len.writeUInt32LE(keys.length)
    this.push(len)
    for (const key of keys) this.publicKey(key)
    return this
  }

  /** The bytes written so far, zero-padded to `size` when given (Anchor allocates accounts at a fixed size). */
  bytes(size?: number): Buffer {
    const out = Buffer.concat(this.chunks)
    if (size === undefined || out.length === size) return out
    if (out.length > size) throw new RangeError(`encoded ${out.length} bytes into an account of ${size}`)
    return Buffer.concat([out, Buffer.alloc(size - out.length)])
  }

  private push(b: Buffer): this {
    this.chunks.push(b)
    return this
  }
}

/** Reads Borsh-encoded values from a byte array, failing with a RangeError when the data runs out. */
export class BorshReader {
  private offset: number
  private readonly buf: Buffer

  constructor(data: Uint8Array, offset = 0) {
    this.buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    this.offset = offset
  }

  u8(): number {
    return this.take(1).readUInt8()
  }

  u64(): bigint {
    return this.take(8).readBigUInt64LE()
  }

  i64(): bigint {
    return this.take(8).readBigInt64LE()
  }

  u128(): bigint {
    const b = this.take(16)
    return b.readBigUInt64LE() | (b.readBigUInt64LE(8) << 64n)
  }

  fixed(length: number): Uint8Array {
    return new Uint8Array(this.take(length))
  }

  publicKey(): PublicKey {
    return new PublicKey(this.take(32))
  }

  u32(): number {
    return this.take(4).readUInt32LE()
  }

  private take(n: number): Buffer {
    if (this.offset + n > this.buf.length)
      throw new RangeError(`data too short: need ${this.offset + n} bytes, have ${this.buf.length}`)
    const out = this.buf.subarray(this.offset, this.offset + n)
    this.offset += n
    return out
  }
}
