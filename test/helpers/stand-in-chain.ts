/**
 * Stand-ins for a real network's outside services, on 127.0.0.1: a Solana JSON-RPC node answering
 * getAccountInfo and getProgramAccounts (memcmp and dataSize filters, as a validator applies them) over accounts
 * held in a map at their deployed sizes, and an IPFS gateway serving `/ipfs/<cid>` from a map.
 */
import bs58 from 'bs58'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair, PublicKey} from '@solana/web3.js'

import {computeCidV0} from '../../src/lib/ipfs/cid.js'
import {encodeJobAccount, encodeRunAccount, JobState} from '../../src/lib/market/accounts.js'
import {ipfsHashToBytes} from '../../src/lib/market/ipfs-hash.js'

/** Allocated sizes on the real chain (reference/README.md): the Borsh content is shorter, the rest is zero. */
export const DEPLOYED_JOB_SIZE = 240
export const DEPLOYED_RUN_SIZE = 120

interface StoredAccount {
  owner: PublicKey
  data: Buffer
}

interface Filter {
  memcmp?: {offset: number; bytes: string}
  dataSize?: number
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function readBody(req: import('node:http').IncomingMessage): Promise<string> {
  let body = ''
  for await (const chunk of req) body += chunk as string
  return body
}

function padded(data: Buffer, size: number): Buffer {
  return Buffer.concat([data, Buffer.alloc(Math.max(0, size - data.length))])
}

/** A Solana JSON-RPC stand-in holding accounts in a map. */
export class StandInRpc {
  readonly accounts = new Map<string, StoredAccount>()
  private server = createServer((req, res) => void this.handle(req, res))
  url = ''

  async start(): Promise<string> {
    this.url = await listen(this.server)
    return this.url
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }

  /** Puts a JobAccount owned by `owner` (the jobs program unless told), 240 bytes as deployed. */
  putJob(
    address: PublicKey,
    options: {owner: PublicKey; poster: PublicKey; cid: string; state?: number; timeout?: number},
  ): void {
    const data = encodeJobAccount({
      ipfsJob: ipfsHashToBytes(options.cid),
      ipfsResult: new Uint8Array(32),
      market: Keypair.generate().publicKey,
      node: PublicKey.default,
      payer: options.poster,
      price: 1n,
      project: options.poster,
      state: options.state ?? JobState.QUEUED,
      timeEnd: 0n,
      timeStart: 0n,
      timeout: BigInt(options.timeout ?? 3600),
    })
    this.accounts.set(address.toBase58(), {owner: options.owner, data: padded(data, DEPLOYED_JOB_SIZE)})
  }

  /** Puts a RunAccount of `job` for `node`, started now, 120 bytes as deployed; answers its address. */
  putRun(job: PublicKey, node: PublicKey, owner: PublicKey): PublicKey {
    const address = Keypair.generate().publicKey
    const data = encodeRunAccount({job, node, payer: node, state: 0, time: BigInt(Math.floor(Date.now() / 1000))})
    this.accounts.set(address.toBase58(), {owner, data: padded(data, DEPLOYED_RUN_SIZE)})
    return address
  }

  private encode(account: StoredAccount) {
    return {
      data: [account.data.toString('base64'), 'base64'],
      executable: false,
      lamports: 1_000_000,
      owner: account.owner.toBase58(),
      rentEpoch: 0,
      space: account.data.length,
    }
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
    const {id, method, params} = JSON.parse(await readBody(req)) as {id: number; method: string; params: unknown[]}
    let result: unknown
    if (method === 'getAccountInfo') {
      const account = this.accounts.get(params[0] as string)
      result = {context: {slot: 1}, value: account ? this.encode(account) : null}
    } else if (method === 'getProgramAccounts') {
      const program = params[0] as string
      const filters = ((params[1] as {filters?: Filter[]} | undefined)?.filters ?? []) as Filter[]
      result = [...this.accounts]
        .filter(([, a]) => a.owner.toBase58() === program && filters.every((f) => matches(a.data, f)))
        .map(([pubkey, a]) => ({pubkey, account: this.encode(a)}))
    } else {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({jsonrpc: '2.0', id, error: {code: -32601, message: 'Method not found'}}))
      return
    }
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(JSON.stringify({jsonrpc: '2.0', id, result}))
  }
}

function matches(data: Buffer, filter: Filter): boolean {
  if (filter.dataSize !== undefined) return data.length === filter.dataSize
  if (filter.memcmp) {
    const wanted = Buffer.from(bs58.decode(filter.memcmp.bytes))
    return data.subarray(filter.memcmp.offset, filter.memcmp.offset + wanted.length).equals(wanted)
  }
  return false
}

/** An IPFS gateway stand-in: `GET /ipfs/<cid>` from a map, 404 for what it does not hold. */
export class StandInGateway {
  readonly files = new Map<string, Buffer>()
  private server = createServer((req, res) => {
    const cid = /^\/ipfs\/(\w+)$/.exec(req.url ?? '')?.[1]
    const file = cid ? this.files.get(cid) : undefined
    res.writeHead(file ? 200 : 404)
    res.end(file ?? 'not found')
  })
  url = ''

  async start(): Promise<string> {
    this.url = await listen(this.server)
    return this.url
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }

  /** Stores a JSON document; answers its CIDv0. */
  add(document: unknown): string {
    const bytes = Buffer.from(JSON.stringify(document))
    const {cid} = computeCidV0(bytes)
    this.files.set(cid, bytes)
    return cid
  }
}
