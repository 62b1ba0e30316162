/**
 * The credit routes of the network's public API, as @nosana/api 2.1.8 calls them, served by the localnet beside its
 * deployment manager: `GET /api/credits/balance`, `POST /api/jobs/list`, `POST /api/jobs/:address/extend|stop`.
 * Jobs are listed, extended and stopped on the chain by the localnet's credits wallet (the job's project and payer,
 * as the network's API lists them with its own), and charged to the API key's owner in the ledger at the market's
 * price per second, one token a credit. A POST with an Idempotency-Key acts once: the same key and body get the
 * first answer again, another body under it is 422.
 */
import {createHash} from 'node:crypto'

import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'
import type {FastifyReply, FastifyRequest} from 'fastify'

import {ExitCode, isGpunetError} from '../errors.js'
import type {Wallet} from '../keys/wallet.js'
import {readBalances} from '../market/rpc/balances.js'
import type {MarketNetwork} from '../market/connect.js'
import {ipfsHashToBytes} from '../market/codec/ipfs-hash.js'
import {isFinal, type JobView, readJob, readMarket} from '../market/jobs/jobs.js'
import {quoteExtend, stopJob} from '../market/jobs/manage.js'
import {type PostQuote, quotePost} from '../market/jobs/post.js'
import {rpcCall} from '../market/rpc/rpc.js'
import {type PreparedTransaction, sendSigned} from '../market/rpc/send.js'
import {signedTransaction, signingKeys} from '../market/rpc/sign.js'
import type {CreditsPlugin} from '../deployments/api/api.js'
import {requestHeaders} from '../http/request-headers.js'
import {ApiError, badRequest, notFound, retryLater} from '../http/api-error.js'
import {bodyObject} from '../deployments/manager/validation.js'
import type {CreditJob, CreditLedger, ListingIntent} from './ledger.js'

/** The credit routes' bodies are a few members: nothing larger is read. */
export const CREDIT_BODY_LIMIT = 4096
/** The longest Idempotency-Key taken (the kit sends UUIDs). */
export const MAX_IDEMPOTENCY_KEY = 200
/** The longest timeout or extension a credit job may ask for: 30 days. */
const MAX_SECONDS = 30 * 24 * 3600
/** Credit base units per credit, as token base units per token: the localnet prices a credit at one token. */
export const CREDIT_UNITS = 1_000_000
/** SOL the credits wallet keeps for fees and rent, topped up from the faucet. */
const WALLET_LAMPORTS = 50_000_000n
/**
 * SOL set aside for each listing or extension in flight, on top of WALLET_LAMPORTS: the rent of a job and a run
 * account (about 4.3 million lamports) and the fees, with room.
 */
const LAMPORTS_PER_REQUEST = 10_000_000n

export interface CreditRoutesOptions {
  ledger: CreditLedger
  net: MarketNetwork
  /** The wallet that lists, extends and stops credit-paid jobs: their project on the chain. */
  wallet: Wallet
  /** Sends the wallet SOL and tokens from the faucet, so that it can always pay for what credits bought. */
  fund(lamports: bigint, tokens: bigint): Promise<void>
  now?: () => number
}

/** What a route answers, kept under its Idempotency-Key. */
interface Answer {
  status: number
  body: unknown
}

/** The credit routes, a plugin of the manager's API (its authentication, its error shape) registered under /api. */
export function creditRoutes(options: CreditRoutesOptions): CreditsPlugin {
  const {ledger, net, wallet} = options
  const now = options.now ?? Date.now
  const {connection, programId} = net

  /**
   * Jobs whose listing was sent and may still land (here, or by a process that stopped): not on the chain yet, which
   * is not "gone" (ended and cleaned), so they are neither charged nor given back until their bytes land or expire.
   */
  const landing = new Set<string>()

  /** Ends the holds of the owner's jobs that ended without the API (their node finished, or gave up). */
  const reconcile = async (owner: string) => {
    await resolveOrphans()
    for (const held of ledger.openJobs(owner)) {
      if (landing.has(held.job)) continue
      const view = await readHeld(held)
      if (view === 'gone') ledger.settle(held.job, held.reserved, now())
      else if (view && isFinal(view.status)) ledger.settle(held.job, cost(view), now())
    }
  }
  const readHeld = async (held: CreditJob): Promise<JobView | 'gone' | null> => {
    try {
      return await readJob(connection, programId, new PublicKey(held.job))
    } catch (error) {
      // A closed account the API did not delist was cleaned after it ended: its run is unknown, its hold is spent.
      if (isGpunetError(error) && error.exitCode === ExitCode.NOT_FOUND) return 'gone'
      throw error
    }
  }
  const free = (owner: string) => {
    const {assigned, reserved, settled} = ledger.balance(owner)
    return assigned - reserved - settled
  }
  // What the requests in flight need of the wallet: each claims its tokens and SOL before it is quoted and gives
  // them back once its transaction is settled (landed or not), and the wallet is topped up to cover every claim.
  // Topped up per request, each request of a burst took the funds the others had been topped up with, and most
  // were refused 402 while their owners' credits covered them: now a burst is answered by the owners' credits.
  let claimedTokens = 0n
  let claimedLamports = 0n
  let topUps: Promise<void> = Promise.resolve()
  /**
   * Runs `work` with `tokens` and a transaction's SOL of the wallet claimed, the wallet topped up from the faucet to
   * cover every claim in flight; the claim ends with `work` (its transaction landed, expired or never sent).
   */
  const provided = async <T>(tokens: bigint, work: () => Promise<T>): Promise<T> => {
    claimedTokens += tokens
    claimedLamports += LAMPORTS_PER_REQUEST
    try {
      // One top-up at a time, each for all claimed so far: a burst costs a few faucet calls, not one a request,
      // and a balance read while another top-up is on its way is never taken for the whole.
      const topUp = topUps.then(async () => {
        const have = await rpcCall(connection, () => readBalances(connection, wallet.publicKey, net.mint))
        const wantLamports = WALLET_LAMPORTS + claimedLamports
        const lamports = have.lamports < wantLamports ? wantLamports - have.lamports : 0n
        const more = have.tokens < claimedTokens ? claimedTokens - have.tokens : 0n
        if (lamports > 0n || more > 0n) await options.fund(lamports, more)
      })
      topUps = topUp.catch(() => {})
      await topUp
      return await work()
    } finally {
      claimedTokens -= tokens
      claimedLamports -= LAMPORTS_PER_REQUEST
    }
  }

  /**
   * Keys left in progress by a process that stopped mid-request (orphans), resolved by the chain: a listing whose
   * job account exists, or whose transaction landed, gets the answer it would have had; one that can no longer land
   * (its blockhash expired, or it failed) has its hold given back and its key freed; one that still could is left
   * for a later pass. A key that had sent nothing the ledger knows of (before its listing was signed, or an extend
   * or stop, whose chain calls sign inside) is freed: a retry acts again, and a stop or extend that had landed is
   * seen on the chain then.
   */
  let orphansLeft = true
  let sweeping: Promise<void> | null = null
  // One pass at a time: two requests at once must not give one hold back twice.
  const resolveOrphans = async () => {
    if (!orphansLeft) return
    sweeping ??= sweepOrphans().finally(() => (sweeping = null))
    await sweeping
  }
  const sweepOrphans = async () => {
    let left = 0
    for (const {owner, key, intent} of ledger.orphans()) {
      if (!intent) {
        ledger.dropKey(owner, key)
        continue
      }
      // A listing landed when its job exists (a job account is new); an extension only by its signature.
      const listed =
        intent.kind === 'list' &&
        (await rpcCall(connection, () => connection.getAccountInfo(new PublicKey(intent.job), 'confirmed'))) !== null
      const landed =
        listed ||
        ((await txLanded(intent.tx)) ??
          ((await rpcCall(connection, () => connection.getBlockHeight('confirmed'))) > intent.lastValidBlockHeight
            ? false
            : null))
      if (intent.kind === 'list') {
        if (landed === null) landing.add(intent.job)
        else landing.delete(intent.job)
      }
      if (landed === true) ledger.answerKey(owner, key, intent.status, intent.answer)
      else if (landed === false) {
        ledger.release(intent.job, intent.units)
        ledger.dropKey(owner, key)
      } else left += 1
    }
    orphansLeft = left > 0
  }

  /** True when a transaction landed, false when it failed, null when the chain does not know it (yet). */
  const txLanded = async (signature: string): Promise<boolean | null> => {
    const {value} = await rpcCall(connection, () =>
      connection.getSignatureStatuses([signature], {searchTransactionHistory: true}),
    )
    const status = value[0]
    if (!status) return null
    if (status.err) return false
    return status.confirmationStatus === 'processed' ? null : true
  }

  /**
   * Sends the quoted `list`, signed once (`signed`: its bytes and signature), its signature saved first: when the
   * send fails without an answer the chain says whether they landed (the job account exists), so a failure never
   * hides a listed job whose hold was given back. Bytes that expired unlanded never can land: their hold is given
   * back.
   */
  const listOnce = async (
    quote: PostQuote,
    job: string,
    units: bigint,
    {raw, signature}: {raw: Buffer; signature: string},
  ): Promise<string> => {
    const {transaction} = quote
    ledger.listed(job, signature)
    let landed: string | null
    landing.add(job)
    try {
      landed = await sendSigned(connection, raw, transaction.blockhash.lastValidBlockHeight)
    } catch (error) {
      const exists = await rpcCall(connection, () => connection.getAccountInfo(new PublicKey(job))).catch(() => null)
      if (exists) return signature
      ledger.release(job, Number(units))
      throw error
    } finally {
      landing.delete(job)
    }
    if (landed === null) {
      ledger.release(job, Number(units))
      throw new ApiError(503, 'transaction_expired', 'the listing expired before it was confirmed; nothing was charged')
    }
    return signature
  }

  return async (app, {auth}) => {
    const owner = async (request: FastifyRequest) => {
      const who = await auth.authenticate(requestHeaders(request.raw))
      if (who.via !== 'api-key')
        throw new ApiError(
          403,
          'api_key_required',
          'credits are used with an API key, not with the wallet headers',
          'make one with `gpunet deployment api-key create` and send it as GPUNET_API_KEY',
        )
      return who.owner
    }
    const ownJob = (who: string, address: string) => {
      const held = ledger.job(address)
      if (!held || held.owner !== who) throw notFound(`credit-paid job ${address.slice(0, 60)} of yours`)
      return held
    }
    const route = {bodyLimit: CREDIT_BODY_LIMIT}

    app.get('/credits/balance', async (request) => {
      const who = await owner(request)
      await reconcile(who)
      const {assigned, reserved, settled} = ledger.balance(who)
      return {
        assignedCredits: assigned / CREDIT_UNITS,
        reservedCredits: reserved / CREDIT_UNITS,
        settledCredits: settled / CREDIT_UNITS,
      }
    })

    app.post('/jobs/list', route, async (request, reply) => {
      const who = await owner(request)
      const body = bodyObject(request.body)
      const ipfsHash = parseIpfsHash(body.ipfsHash)
      const market = parseAddress(body.market, 'market')
      const timeout = body.timeout === undefined ? undefined : parseSeconds(body.timeout, 'timeout')
      if (body.node !== undefined)
        throw badRequest('node_unsupported', 'the localnet lists credit jobs on the market, not for a chosen node')
      return once(request, reply, who, {ipfsHash, market, timeout}, async (intend) => {
        await reconcile(who)
        const account = await readMarket(connection, programId, new PublicKey(market))
        const seconds = BigInt(timeout ?? Number(account.jobTimeout))
        const units = account.jobPrice * seconds
        // Refused before the faucet or the chain is asked; the hold below is the atomic check.
        if (free(who) < Number(units)) throw insufficient(ledger.balance(who), Number(units))
        return provided(units, async () => {
          const quote = await quotePost(net, wallet, new PublicKey(market), ipfsHash, seconds)
          const job = quote.transaction.signers[1]!.publicKey.toBase58()
          const signed = signOnce(quote.transaction)
          const answer: Answer = {
            status: 200,
            body: {
              tx: signed.signature,
              job,
              run: quote.transaction.signers[2]!.publicKey.toBase58(),
              credits: {
                costUSD: Number(units) / CREDIT_UNITS,
                creditsUsed: Number(units) / CREDIT_UNITS,
                reservationId: job,
                project: wallet.address,
              },
            },
          }
          // Saved before the hold and the send: if this process stops now, the next one asks the chain (resolveOrphans).
          const {lastValidBlockHeight} = quote.transaction.blockhash
          intend({
            kind: 'list',
            job,
            tx: signed.signature,
            lastValidBlockHeight,
            units: Number(units),
            status: answer.status,
            answer: answer.body,
          })
          const hold = {job, market, price: Number(account.jobPrice), units: Number(units)}
          if (!ledger.reserve(who, hold, now())) throw insufficient(ledger.balance(who), Number(units))
          await listOnce(quote, job, units, signed)
          return answer
        })
      })
    })

    app.post('/jobs/:address/extend', route, async (request, reply) => {
      const who = await owner(request)
      const address = (request.params as {address: string}).address
      const body = request.body === undefined ? {} : bodyObject(request.body)
      const seconds = parseSeconds(body.seconds, 'seconds')
      return once(request, reply, who, {address, seconds}, async (intend) => {
        const held = ownJob(who, address)
        const view = await liveJob(held)
        const units = view.job.price * BigInt(seconds)
        if (free(who) < Number(units)) throw insufficient(ledger.balance(who), Number(units))
        return provided(units, async () => {
          const quote = await quoteExtend(net, wallet, view, view.job.timeout + BigInt(seconds))
          const signed = signOnce(quote.transaction)
          const used = Number(units) / CREDIT_UNITS
          const answer: Answer = {
            status: 200,
            body: {
              tx: signed.signature,
              job: address,
              credits: {costUSD: used, creditsUsed: used, reservationId: address},
            },
          }
          const {lastValidBlockHeight} = quote.transaction.blockhash
          const intent = {kind: 'extend' as const, job: address, tx: signed.signature, lastValidBlockHeight}
          intend({...intent, units: Number(units), status: answer.status, answer: answer.body})
          if (!ledger.reserve(who, {...held, units: Number(units)}, now()))
            throw insufficient(ledger.balance(who), Number(units))
          let landed: string | null
          try {
            landed = await sendSigned(connection, signed.raw, lastValidBlockHeight)
          } catch (error) {
            // No answer: the chain says whether it landed (then it is paid for, and answered).
            if ((await txLanded(signed.signature).catch(() => null)) === true) return answer
            ledger.release(address, Number(units))
            throw error
          }
          if (landed === null) {
            ledger.release(address, Number(units))
            throw new ApiError(
              503,
              'transaction_expired',
              'the extension expired before it was confirmed; nothing was charged',
            )
          }
          return answer
        })
      })
    })

    app.post('/jobs/:address/stop', route, async (request, reply) => {
      const who = await owner(request)
      const address = (request.params as {address: string}).address
      return once(request, reply, who, {address}, async () => {
        const held = ownJob(who, address)
        const view = await liveJob(held)
        const {signature, action} = await stopJob(net, wallet, view)
        // The chain settles it as the market does: a delisted job refunds everything, an ended one pays its time.
        const after = await readHeld(held)
        ledger.settle(address, action === 'delist' || after === 'gone' || !after ? 0 : cost(after), now())
        return {status: 200, body: {tx: signature, job: address, delisted: action === 'delist'}}
      })
    })

    /** A held job still on the chain and not over; 409 when it is, and its hold settled. */
    const liveJob = async (held: CreditJob): Promise<JobView> => {
      const view = await readHeld(held)
      if ((view === 'gone' || view === null) && landing.has(held.job))
        throw new ApiError(409, 'job_listing', `job ${held.job} is still being listed`, 'try again in a few seconds')
      if (view === 'gone' || view === null || isFinal(view.status)) {
        ledger.settle(held.job, view === 'gone' || view === null ? held.reserved : cost(view), now())
        throw new ApiError(409, 'job_over', `job ${held.job} has already ended`)
      }
      return view
    }

    /** Runs `act` once per Idempotency-Key and body; without a key, every time. */
    const once = async (
      request: FastifyRequest,
      reply: FastifyReply,
      who: string,
      request_: unknown,
      act: (intend: (intent: ListingIntent) => void) => Promise<Answer>,
    ) => {
      const key = idempotencyKey(request.headers['idempotency-key'])
      if (key === undefined) {
        const answer = await act(() => {})
        return reply.code(answer.status).send(answer.body)
      }
      const digest = createHash('sha256')
        .update(`${request.method} ${request.routeOptions.url} ${JSON.stringify(request_)}`)
        .digest('hex')
      await resolveOrphans()
      const seen = ledger.claimKey(who, key, digest, now())
      if (seen.state === 'conflict')
        throw new ApiError(
          422,
          'idempotency_key_reused',
          'this Idempotency-Key was used for another request',
          'make a new key for each new request',
        )
      if (seen.state === 'pending')
        throw retryLater(409, 'request_in_progress', 'a request with this Idempotency-Key is still being handled', 1)
      if (seen.state === 'answered')
        return reply.code(seen.status).header('idempotent-replayed', 'true').send(seen.answer)
      let answer: Answer
      try {
        answer = await act((intent) => ledger.intend(who, key, intent))
      } catch (error) {
        // Nothing was bought (a refusal, or a transaction that did not land and whose hold was given back).
        ledger.dropKey(who, key)
        throw error
      }
      ledger.answerKey(who, key, answer.status, answer.body)
      return reply.code(answer.status).send(answer.body)
    }
  }
}

/** Signs a prepared transaction once: its bytes, and its id (the fee payer's signature, after one count byte). */
function signOnce(transaction: PreparedTransaction): {raw: Buffer; signature: string} {
  const raw = signedTransaction(
    transaction.signers[0]!.publicKey,
    transaction.blockhash.blockhash,
    [...transaction.budget, ...transaction.instructions],
    signingKeys(transaction.signers),
  )
  return {raw, signature: bs58.encode(raw.subarray(1, 65))}
}

/** What a job that ended cost, as the market pays its node: price x min(time it ran, timeout); nothing if never run. */
function cost(view: JobView): number {
  const {job} = view
  if (view.status !== 'COMPLETED' || job.timeStart <= 0n) return 0
  const ran = job.timeEnd - job.timeStart
  const seconds = ran < 0n ? 0n : ran > job.timeout ? job.timeout : ran
  return Number(job.price * seconds)
}

function insufficient(balance: {assigned: number; reserved: number; settled: number}, units: number): ApiError {
  const free = balance.assigned - balance.reserved - balance.settled
  return new ApiError(
    402,
    'insufficient_credits',
    `this needs ${units / CREDIT_UNITS} credits and ${free / CREDIT_UNITS} are free`,
    'add credits with `gpunet localnet fund --credits N`',
  )
}

function idempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  if (Array.isArray(value) || !/^[\x21-\x7e]+$/.test(value) || value.length > MAX_IDEMPOTENCY_KEY)
    throw badRequest(
      'invalid_idempotency_key',
      `Idempotency-Key must be one value of 1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters`,
    )
  return value
}

function parseIpfsHash(value: unknown): string {
  if (typeof value === 'string' && value.length <= 100) {
    try {
      ipfsHashToBytes(value)
      return value
    } catch {
      // Refused below.
    }
  }
  throw badRequest('invalid_ipfs_hash', 'ipfsHash must be the CIDv0 (Qm...) of the uploaded job definition')
}

function parseAddress(value: unknown, name: string): string {
  if (typeof value === 'string' && value.length <= 44) {
    try {
      return new PublicKey(value).toBase58()
    } catch {
      // Refused below.
    }
  }
  throw badRequest(`invalid_${name}`, `${name} must be a base58 address`)
}

/** Seconds as a whole number (or its decimal text, as the network's schema allows) from 1 to 30 days. */
function parseSeconds(value: unknown, name: string): number {
  const seconds = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SECONDS)
    throw badRequest(`invalid_${name}`, `${name} must be a whole number of seconds from 1 to ${MAX_SECONDS}`)
  return seconds
}
