/**
 * A localnet's state: the chain, the content store and the faucet, loaded from its data directory or created
 * on first start (payment token, default market, funded wallet).
 */
import {randomBytes} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'

import {createInitializeMint2Instruction, MINT_SIZE, MintLayout, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  SYSVAR_RENT_PUBKEY,
  type TransactionInstruction,
} from '@solana/web3.js'
import {LiteSvm} from 'litesvm/dist/internal.js'

import {ContentStore} from '../ipfs/store.js'
import {decodeMarketAccount, QueueType} from '../market/codec/accounts.js'
import {jobsInstruction} from '../market/codec/instructions.js'
import {TOKEN_DECIMALS} from '../market/networks.js'
import {findStakeAddress, findVaultAddress} from '../market/codec/pda.js'
import {signedTransaction, signingKeys} from '../market/rpc/sign.js'
import {loadOrCreateKeypair, readKeypair} from '../keys/wallet.js'
import {Chain} from './chain.js'
import {faucetInstructions, type FundAmounts} from './faucet.js'
import {
  emptyTokenAccountData,
  REWARDS_PROGRAM_ID,
  STAKING_PROGRAM_ID,
  type JobsProgramIds,
} from './jobs-program/context.js'
import {
  decodeStakeAccount,
  encodeStakeAccount,
  REFLECTION_ACCOUNT_DISCRIMINATOR,
  REFLECTION_ACCOUNT_SPACE,
} from './jobs-program/foreign.js'
import {type AccountState, writeAccount} from './chain/ledger.js'
import type {RewardsAccounts} from '../market/connect.js'
import {idlAccountData, idlAddress} from './jobs-program/idl-account.js'
import {idsAddresses} from './ids.js'
import type {LocalnetIds} from '../settings/kinds.js'
import {localnetRewardsAccounts} from './rewards.js'
import {localnetFiles} from './paths.js'
import {ChainStore} from './chain/persistence.js'
import {SlotClock} from './chain/slots.js'
import {transactionErrorMessage} from './chain/tx-error.js'

/** What the first start created; never changes afterwards. */
export interface GenesisRecord {
  version: 1
  /** Seed of the blockhashes. */
  seed: string
  genesisMs: number
  programId: string
  mint: string
  market: string
  faucet: string
  createdAt: string
  /** Whose addresses the program and mint have; absent in chains made before it could be chosen (`own`). */
  ids?: LocalnetIds
}

/** The default market's terms. */
export const DEFAULT_MARKET = {
  /** Token base units per second (0.0001 tokens/s). */
  jobPrice: 100n,
  /** Seconds. */
  jobTimeout: 7200n,
  /** Seconds a queued job may wait. */
  jobExpiration: 86_400n,
}

/** What the first start gives the default wallet. */
export const DEFAULT_FUNDING = {sol: 100, tokens: 1000}

const FAUCET_LAMPORTS = 1_000_000_000n * BigInt(LAMPORTS_PER_SOL)

/**
 * The localnet's build of the jobs program: the mainnet program id, with the localnet's mint as its token and
 * the faucet as market admin (a build for a cluster of one's own, as the program's tests make).
 */
function programIds(genesis: GenesisRecord): JobsProgramIds {
  return {
    programId: new PublicKey(genesis.programId),
    tokenMint: new PublicKey(genesis.mint),
    marketAdmin: new PublicKey(genesis.faucet),
  }
}

export interface LocalnetOptions {
  dataDir: string
  /** Slot duration; tests shorten it to see blockhashes expire. */
  slotMs?: number
  /** Funded on first start. */
  wallet?: PublicKey
  /** The addresses a new chain is created with (an existing one keeps its own); default `own`. */
  ids?: LocalnetIds
  /** The content store's disk use (DEFAULT_CONTENT_MAX_BYTES when absent). */
  contentMaxBytes?: number
  /** The default market's price (base units per second) and job timeout on a new chain; DEFAULT_MARKET's otherwise. */
  defaultMarket?: MarketTerms
}

/** What the jobs program's `open` takes of a market: its price (token base units per second) and job timeout. */
export interface MarketTerms {
  jobPrice: bigint
  jobTimeout: bigint
}

export class Localnet {
  private constructor(
    readonly chain: Chain,
    readonly genesis: GenesisRecord,
    readonly content: ContentStore,
    private readonly faucet: Keypair,
  ) {}

  /** Loads the localnet in `dataDir`, creating it on first start. */
  static open(options: LocalnetOptions): Localnet {
    const files = localnetFiles(options.dataDir)
    mkdirSync(files.chain, {recursive: true})
    const store = new ChainStore(files.chain)
    const content = new ContentStore(files.content, options.contentMaxBytes)
    if (existsSync(files.genesis) && store.exists()) {
      const genesis = JSON.parse(readFileSync(files.genesis, 'utf8')) as GenesisRecord
      const {svm, statuses} = store.load()
      const clock = new SlotClock(genesis.seed, genesis.genesisMs, options.slotMs)
      const faucet = readKeypair(files.faucet)
      const chain = new Chain(svm, programIds(genesis), clock, statuses, store)
      const localnet = new Localnet(chain, genesis, content, faucet)
      // A chain made by an earlier version may lack the rewards accounts `list` and `extend` check, and the IDL.
      localnet.ensureRewardsAccounts()
      localnet.ensureIdlAccount()
      // Start from a snapshot that holds the replayed journal, so the journal only grows from here.
      chain.compact()
      return localnet
    }
    return Localnet.create(options, store, content)
  }

  private static create(options: LocalnetOptions, store: ChainStore, content: ContentStore): Localnet {
    const files = localnetFiles(options.dataDir)
    const {keypair: faucet} = loadOrCreateKeypair(files.faucet)
    const ids = options.ids ?? 'own'
    const {programId, mint: networkMint} = idsAddresses(ids)
    const seed = randomBytes(32).toString('hex')
    const genesisMs = Date.now()
    const ownMint = networkMint ? null : Keypair.generate()
    const mintAddress = networkMint ?? ownMint!.publicKey
    const market = Keypair.generate()
    const genesis: GenesisRecord = {
      version: 1,
      seed,
      genesisMs,
      programId: programId.toBase58(),
      mint: mintAddress.toBase58(),
      market: market.publicKey.toBase58(),
      faucet: faucet.publicKey.toBase58(),
      createdAt: new Date(genesisMs).toISOString(),
      ids,
    }
    const clock = new SlotClock(seed, genesisMs, options.slotMs)
    const chain = new Chain(new LiteSvm(), programIds(genesis), clock, new Map(), store)
    writeAccount(chain.svm, faucet.publicKey, {
      lamports: FAUCET_LAMPORTS,
      owner: SystemProgram.programId,
      data: Buffer.alloc(0),
      executable: false,
    })
    const node = new Localnet(chain, genesis, content, faucet)
    if (ownMint) {
      node.submit(
        [
          SystemProgram.createAccount({
            fromPubkey: faucet.publicKey,
            newAccountPubkey: ownMint.publicKey,
            space: MINT_SIZE,
            lamports: Number(chain.rentExempt(MINT_SIZE)),
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeMint2Instruction(ownMint.publicKey, TOKEN_DECIMALS, faucet.publicKey, null),
        ],
        [ownMint],
      )
    } else {
      // A network's mint address, whose key nobody here holds: the account is laid down as the token program
      // would have initialized it, with the faucet as its mint authority.
      const data = Buffer.alloc(MINT_SIZE)
      MintLayout.encode(
        {
          mintAuthorityOption: 1,
          mintAuthority: faucet.publicKey,
          supply: 0n,
          decimals: TOKEN_DECIMALS,
          isInitialized: true,
          freezeAuthorityOption: 0,
          freezeAuthority: PublicKey.default,
        },
        data,
      )
      writeAccount(chain.svm, mintAddress, {
        lamports: chain.rentExempt(MINT_SIZE),
        owner: TOKEN_PROGRAM_ID,
        data,
        executable: false,
      })
    }
    node.openMarket(options.defaultMarket ?? DEFAULT_MARKET, market)
    node.ensureRewardsAccounts()
    node.ensureIdlAccount()
    if (options.wallet) {
      node.fund(options.wallet, {
        lamports: BigInt(DEFAULT_FUNDING.sol * LAMPORTS_PER_SOL),
        tokens: BigInt(DEFAULT_FUNDING.tokens) * 10n ** BigInt(TOKEN_DECIMALS),
      })
    }
    chain.compact()
    // Written last: a first start cut short starts over instead of loading half a genesis.
    writeFileSync(files.genesis, `${JSON.stringify(node.genesis, null, 2)}\n`)
    return node
  }

  get mint(): PublicKey {
    return new PublicKey(this.genesis.mint)
  }

  get faucetAddress(): PublicKey {
    return this.faucet.publicKey
  }

  get market(): PublicKey {
    return new PublicKey(this.genesis.market)
  }

  /** The rewards accounts `list` and `extend` take (validated, unused: the network fee is 0). */
  get rewards(): RewardsAccounts {
    return localnetRewardsAccounts(this.mint)
  }

  /**
   * Gives `node` a stake account, as the staking program would after a stake of `xnos`: `work` and `claim` read
   * one. The staking program itself is not emulated; the localnet writes the account.
   */
  stake(node: PublicKey, xnos = 0n): void {
    const address = findStakeAddress(this.mint, node)
    const existing = this.chain.account(address)
    if (existing && decodeStakeAccount(existing.data).xnos === xnos) return
    const data = encodeStakeAccount({
      amount: xnos,
      authority: node,
      duration: 0n,
      timeUnstake: 0n,
      vault: PublicKey.findProgramAddressSync([Buffer.from('vault'), node.toBuffer()], STAKING_PROGRAM_ID)[0],
      vaultBump: 0,
      xnos,
    })
    this.chain.setAccounts([[address, this.programOwned(STAKING_PROGRAM_ID, data)]])
  }

  /** Writes the rewards program's reflection and vault accounts when missing (the fee is 0: never used). */
  ensureRewardsAccounts(): void {
    const {rewardsReflection, rewardsVault} = this.rewards
    const writes: [PublicKey, AccountState][] = []
    if (!this.chain.account(rewardsReflection)) {
      const data = Buffer.alloc(REFLECTION_ACCOUNT_SPACE)
      REFLECTION_ACCOUNT_DISCRIMINATOR.copy(data)
      writes.push([rewardsReflection, this.programOwned(REWARDS_PROGRAM_ID, data)])
    }
    if (!this.chain.account(rewardsVault)) {
      writes.push([rewardsVault, this.programOwned(TOKEN_PROGRAM_ID, emptyTokenAccountData(this.mint, rewardsVault))])
    }
    if (writes.length > 0) this.chain.setAccounts(writes)
  }

  /** Writes the jobs program's Anchor IDL account when missing: the network's SDK reads it before any jobs call. */
  ensureIdlAccount(): void {
    const address = idlAddress(this.chain.programId)
    if (this.chain.account(address)) return
    this.chain.setAccounts([[address, this.programOwned(this.chain.programId, idlAccountData(this.faucet.publicKey))]])
  }

  private programOwned(owner: PublicKey, data: Buffer): AccountState {
    return {lamports: this.chain.rentExempt(data.length), owner, data, executable: false}
  }

  /**
   * Opens a market with the jobs program's own `open`, the faucet its authority, open to every node (no access key),
   * as anyone may open one on the network; returns its address.
   */
  openMarket(terms: MarketTerms, market = Keypair.generate()): PublicKey {
    const {programId} = this.chain
    const [vault] = findVaultAddress(programId, market.publicKey, this.mint)
    this.submit(
      [
        jobsInstruction(
          programId,
          'open',
          {
            mint: this.mint,
            market: market.publicKey,
            vault,
            authority: this.faucet.publicKey,
            accessKey: SystemProgram.programId,
            rent: SYSVAR_RENT_PUBKEY,
            systemProgram: SystemProgram.programId,
            tokenProgram: TOKEN_PROGRAM_ID,
          },
          {
            jobExpiration: DEFAULT_MARKET.jobExpiration,
            jobPrice: terms.jobPrice,
            jobTimeout: terms.jobTimeout,
            jobType: 0,
            nodeXnosMinimum: 0n,
          },
        ),
      ],
      [market],
    )
    return market.publicKey
  }

  /** Takes `node` out of a market's node queue (the default market's unless named; the faucet is its authority). */
  dequeueNode(node: PublicKey, marketAddress: PublicKey = this.market): void {
    const account = this.chain.account(marketAddress)
    if (!account) return
    const market = decodeMarketAccount(account.data)
    if (market.queueType !== QueueType.NODE || !market.queue.some((k) => k.equals(node))) return
    this.submit(
      [
        jobsInstruction(
          this.chain.programId,
          'stop',
          {market: marketAddress, node, authority: this.faucet.publicKey},
          {},
        ),
      ],
      [],
    )
  }

  /** Sends SOL and payment tokens from the faucet (`requestAirdrop`, first start); returns the signature. */
  fund(owner: PublicKey, amounts: FundAmounts): string {
    const signature = this.submit(faucetInstructions(this.faucet.publicKey, this.mint, owner, amounts), [])
    // What a node needs besides SOL and tokens: a (zero) stake, which the unemulated staking program would hold.
    if (PublicKey.isOnCurve(owner.toBytes()) && !this.chain.account(findStakeAddress(this.mint, owner)))
      this.stake(owner)
    return signature
  }

  /** Signs with the faucet (fee payer, market authority and admin) and `signers`; lands the transaction or throws. */
  submit(instructions: TransactionInstruction[], signers: Keypair[]): string {
    const keys = signingKeys([this.faucet, ...signers])
    const {blockhash} = this.chain.latestBlockhash()
    // The chain verifies the signatures; web3.js's sign and serialize would do the curve arithmetic in JavaScript.
    const outcome = this.chain.send(signedTransaction(this.faucet.publicKey, blockhash, instructions, keys))
    if (outcome.kind === 'landed' && !outcome.execution.err) return outcome.signature
    const reason =
      outcome.kind === 'preflight-failed' && outcome.execution.err
        ? transactionErrorMessage(outcome.execution.err)
        : outcome.kind
    throw new Error(`localnet faucet transaction failed: ${reason}`)
  }
}
