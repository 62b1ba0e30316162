/**
 * Stand-ins for the outside services of a real network, on 127.0.0.1 port 0: a Solana JSON-RPC node serving the
 * accounts it is given (in their deployed sizes) and recording the transactions sent to it, and a pinning service
 * with a gateway. CIDs are computed with the IPFS libraries (ipfs-unixfs-importer), not with gpunet's code.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {AccountLayout, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, type PublicKey, SystemProgram, Transaction} from '@solana/web3.js'
import {importer} from 'ipfs-unixfs-importer'
import {base58btc} from 'multiformats/bases/base58'

export interface StandinAccount {
  owner: PublicKey
  lamports: number
  data: Buffer
}

export interface StandinRpc {
  url: string
  accounts: Map<string, StandinAccount>
  /** Every request, in order: method and params. */
  requests: {method: string; params: unknown[]}[]
  /** Transactions sent (deserialized), in order. */
  sent: Transaction[]
  /** Called for each sent transaction, to apply what it does to `accounts`. */
  onSend: (tx: Transaction) => void
  /** Answers to getRecentPrioritizationFees. */
  prioritizationFees: number[]
  /** Compute units simulateTransaction reports. */
  unitsConsumed: number
  /** Requests answered 429 (with Retry-After: 0) before any is served; Infinity refuses all. */
  rateLimited: number
  /** Transactions received and lost (as a congested leader loses them) before one lands. */
  dropped: number
  /** Block height added at each getBlockHeight: a large step expires every blockhash at once. */
  heightStep: number
  /** What simulateTransaction reports as the error and logs (none: it succeeds). */
  simulationError: {err: unknown; logs: string[] | null} | null
  /** The confirmation status a landed transaction reports. */
  confirmationStatus: 'processed' | 'confirmed' | 'finalized'
  /** The JSON-RPC error sendTransaction answers with (none: it lands), e.g. a preflight failure with its logs. */
  sendError: {code: number; message: string; data?: unknown} | null
  /** The error a landed transaction's status reports (none: it succeeded). */
  statusError: unknown
  set(address: PublicKey, account: StandinAccount): void
  close(): Promise<void>
}

const RENT_PER_BYTE_YEAR = 3480
/** The rent-exempt minimum with default rent: (128 + length) x 3480 x 2 lamports. */
export const rentExempt = (length: number) => (128 + length) * RENT_PER_BYTE_YEAR * 2

/** Starts a stand-in JSON-RPC node. */
export async function startStandinRpc(): Promise<StandinRpc> {
  let slot = 1000
  const statuses = new Map<string, number>()
  const rpc: StandinRpc = {
    url: '',
    accounts: new Map(),
    requests: [],
    sent: [],
    onSend: () => {},
    prioritizationFees: [],
    unitsConsumed: 0,
    rateLimited: 0,
    dropped: 0,
    heightStep: 0,
    simulationError: null,
    confirmationStatus: 'confirmed',
    sendError: null,
    statusError: null,
    set(address, account) {
      rpc.accounts.set(address.toBase58(), account)
    },
    close: () => close(server),
  }
  const encode = (account: StandinAccount | undefined, cfg: {dataSlice?: {offset: number; length: number}} = {}) => {
    if (!account) return null
    const data = cfg.dataSlice
      ? account.data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length)
      : account.data
    return {
      data: [data.toString('base64'), 'base64'],
      executable: false,
      lamports: account.lamports,
      owner: account.owner.toBase58(),
      rentEpoch: 0,
      space: account.data.length,
    }
  }
  const context = (value: unknown) => ({context: {slot}, value})
  const methods: Record<string, (p: unknown[]) => unknown> = {
    getAccountInfo: (p) => context(encode(rpc.accounts.get(p[0] as string))),
    getMultipleAccounts: (p) => context((p[0] as string[]).map((k) => encode(rpc.accounts.get(k)))),
    getBalance: (p) => context(rpc.accounts.get(p[0] as string)?.lamports ?? 0),
    getMinimumBalanceForRentExemption: (p) => rentExempt(p[0] as number),
    getTokenAccountBalance: (p) => {
      const account = rpc.accounts.get(p[0] as string)
      if (!account) throw Object.assign(new Error('Invalid param: could not find account'), {code: -32602})
      const amount = AccountLayout.decode(account.data).amount.toString()
      return context({
        amount,
        decimals: 6,
        uiAmount: Number(amount) / 1e6,
        uiAmountString: String(Number(amount) / 1e6),
      })
    },
    getProgramAccounts: (p) => {
      const [program, cfg = {}] = p as [
        string,
        {
          filters?: {dataSize?: number; memcmp?: {offset: number; bytes: string}}[]
          dataSlice?: {offset: number; length: number}
        },
      ]
      return [...rpc.accounts.entries()]
        .filter(([, a]) => a.owner.toBase58() === program)
        .filter(([, a]) =>
          (cfg.filters ?? []).every((f) => {
            if (f.dataSize !== undefined) return a.data.length === f.dataSize
            // A filter naming neither test selects no account instead of failing the whole request.
            if (!f.memcmp) return false
            const wanted = Buffer.from(base58btc.baseDecode(f.memcmp.bytes))
            return a.data.subarray(f.memcmp.offset, f.memcmp.offset + wanted.length).equals(wanted)
          }),
        )
        .map(([pubkey, a]) => ({pubkey, account: encode(a, cfg)}))
    },
    getLatestBlockhash: () =>
      context({blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: slot + 150}),
    getBlockHeight: () => (slot += rpc.heightStep),
    getRecentPrioritizationFees: () =>
      rpc.prioritizationFees.map((prioritizationFee, i) => ({slot: slot - i, prioritizationFee})),
    simulateTransaction: () =>
      context({
        err: rpc.simulationError?.err ?? null,
        logs: rpc.simulationError ? rpc.simulationError.logs : [],
        accounts: null,
        unitsConsumed: rpc.unitsConsumed,
        returnData: null,
      }),
    sendTransaction: (p) => {
      if (rpc.sendError) throw Object.assign(new Error(rpc.sendError.message), rpc.sendError)
      const tx = Transaction.from(Buffer.from(p[0] as string, 'base64'))
      const signature = base58btc.baseEncode(tx.signature!)
      if (rpc.dropped > 0) {
        rpc.dropped--
        return signature
      }
      if (!statuses.has(signature)) {
        rpc.sent.push(tx)
        rpc.onSend(tx)
        statuses.set(signature, ++slot)
      }
      return signature
    },
    getSignatureStatuses: (p) =>
      context(
        (p[0] as string[]).map((s) =>
          statuses.has(s)
            ? {
                slot: statuses.get(s),
                confirmations: null,
                err: rpc.statusError,
                status: rpc.statusError ? {Err: rpc.statusError} : {Ok: null},
                confirmationStatus: rpc.confirmationStatus,
              }
            : null,
        ),
      ),
  }
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      if (rpc.rateLimited > 0) {
        rpc.rateLimited--
        res.writeHead(429, {'retry-after': '0', 'content-type': 'text/plain'})
        return res.end('Too many requests for a specific RPC call')
      }
      const request = JSON.parse(text) as {id: unknown; method: string; params?: unknown[]}
      rpc.requests.push({method: request.method, params: request.params ?? []})
      const method = methods[request.method]
      let answer: object
      try {
        if (!method) throw Object.assign(new Error(`Method not found: ${request.method}`), {code: -32601})
        answer = {jsonrpc: '2.0', id: request.id, result: method(request.params ?? [])}
      } catch (error) {
        const {code = -32603, message, data} = error as {code?: number; message: string; data?: unknown}
        answer = {jsonrpc: '2.0', id: request.id, error: {code, message, ...(data === undefined ? {} : {data})}}
      }
      json(res, 200, answer)
    })
  })
  rpc.url = await listen(server)
  return rpc
}

/** A wallet's SOL and its associated token account of `mint` holding `tokens` base units, on the stand-in. */
export function fundWallet(rpc: StandinRpc, owner: PublicKey, mint: PublicKey, lamports: number, tokens: bigint): void {
  rpc.set(owner, {owner: SystemProgram.programId, lamports, data: Buffer.alloc(0)})
  rpc.set(getAssociatedTokenAddressSync(mint, owner, true), tokenAccount(mint, owner, tokens))
}

/** An SPL token account of `mint` owned by `owner` (165 bytes, owned by the token program). */
export function tokenAccount(mint: PublicKey, owner: PublicKey, amount: bigint): StandinAccount {
  const data = Buffer.alloc(AccountLayout.span)
  AccountLayout.encode(
    {
      mint,
      owner,
      amount,
      delegateOption: 0,
      delegate: owner,
      state: 1,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: owner,
    },
    data,
  )
  return {owner: TOKEN_PROGRAM_ID, lamports: rentExempt(165), data}
}

/** The 32-byte sha256 digest inside a CIDv0 (without its multihash prefix): what a job account's ipfs_job holds. */
export const cidDigest = (cid: string): Uint8Array => base58btc.baseDecode(cid).subarray(2)

/** The CIDv0 `ipfs add` gives these bytes (the 2015 defaults: 256 KiB chunks, 174 links, UnixFS leaves). */
export async function ipfsCid(bytes: Uint8Array): Promise<string> {
  let cid = ''
  // The blocks themselves are not needed, only the root CID.
  const blockstore = {put: async (key: unknown) => key} as unknown as Parameters<typeof importer>[1]
  for await (const entry of importer([{content: bytes}], blockstore, {profile: 'unixfs-v0-2015'})) {
    cid = entry.cid.toString()
  }
  return cid
}

export interface StandinPinning {
  url: string
  /** Uploads received: the Authorization header and the file's bytes. */
  uploads: {authorization: string | undefined; bytes: Uint8Array; options: string | null}[]
  /** Content served by the gateway under /ipfs/<cid>. */
  content: Map<string, Uint8Array>
  /** When set, the CID the service answers instead of the right one. */
  lie: string | null
  close(): Promise<void>
}

/** A pinning service (`POST /pinning/pinFileToIPFS`, JWT as bearer) and gateway (`GET /ipfs/<cid>`) in one server. */
export async function startStandinPinning(jwt: string): Promise<StandinPinning> {
  const pinning: StandinPinning = {url: '', uploads: [], content: new Map(), lie: null, close: () => close(server)}
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await bodyBytes(req)
      if (req.method === 'POST' && req.url === '/pinning/pinFileToIPFS') {
        if (req.headers.authorization !== `Bearer ${jwt}`) return json(res, 401, {error: 'Unauthorized'})
        const form = await new Request('http://localhost/', {
          method: 'POST',
          headers: {'content-type': req.headers['content-type'] ?? ''},
          body: new Uint8Array(raw),
        }).formData()
        const file = form.get('file') as File
        const bytes = new Uint8Array(await file.arrayBuffer())
        pinning.uploads.push({
          authorization: req.headers.authorization,
          bytes,
          options: form.get('pinataOptions') as string | null,
        })
        const cid = await ipfsCid(bytes)
        pinning.content.set(cid, bytes)
        return json(res, 200, {
          IpfsHash: pinning.lie ?? cid,
          PinSize: bytes.length,
          Timestamp: new Date().toISOString(),
        })
      }
      const match = /^\/ipfs\/(\w+)$/.exec(req.url ?? '')
      const found = match && pinning.content.get(match[1]!)
      if (req.method === 'GET' && found) {
        res.writeHead(200, {'content-type': 'application/octet-stream'})
        return res.end(found)
      }
      json(res, 404, {error: 'not found'})
    })()
  })
  pinning.url = await listen(server)
  return pinning
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify(value))
}

async function bodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function body(req: IncomingMessage): Promise<string> {
  return (await bodyBytes(req)).toString('utf8')
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function close(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}
