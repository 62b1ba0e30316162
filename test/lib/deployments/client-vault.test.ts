/**
 * The owner's check of a manager's withdraw transaction before the wallet co-signs it: what an honest manager sends
 * (the network's: SOL and tokens from the vault to the owner, the owner's token account created, the owner paying
 * the fee) passes, in the legacy and the v0 form; every way a hostile one could make the wallet sign more is refused.
 */
import {strict as assert} from 'node:assert'

import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'

import {ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID} from '@solana/spl-token'

import {checkWithdraw} from '../../../src/lib/deployments/client/client-vault.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'

const owner = Keypair.generate()
const vault = Keypair.generate()
const mint = Keypair.generate().publicKey
const stranger = Keypair.generate()
const BLOCKHASH = Keypair.generate().publicKey.toBase58()
const MAX_FEE = 1_000_000n

const ownerTokens = getAssociatedTokenAddressSync(mint, owner.publicKey, true)
const vaultTokens = getAssociatedTokenAddressSync(mint, vault.publicKey, true)

/** The network manager's withdraw: all SOL, then the owner's token account and all tokens, the owner paying fees. */
function honest(): TransactionInstruction[] {
  return [
    SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: owner.publicKey, lamports: 5_000_000}),
    createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, ownerTokens, owner.publicKey, mint),
    createTransferCheckedInstruction(vaultTokens, mint, ownerTokens, vault.publicKey, 2_500_000n, 6),
  ]
}

/** A transaction as a manager sends it: base64, signed by the vault (and `signers`), the fee payer's slot empty. */
function legacy(instructions: TransactionInstruction[], payer: PublicKey = owner.publicKey, signers = [vault]): string {
  const tx = new Transaction({feePayer: payer, recentBlockhash: BLOCKHASH}).add(...instructions)
  // Only the keys an instruction names as signers sign (web3.js refuses any other).
  const named = signers.filter((s) =>
    instructions.some((ix) => ix.keys.some((k) => k.isSigner && k.pubkey.equals(s.publicKey))),
  )
  if (named.length > 0) tx.partialSign(...named)
  return tx.serialize({requireAllSignatures: false}).toString('base64')
}

function v0(instructions: TransactionInstruction[]): string {
  const message = new TransactionMessage({
    payerKey: owner.publicKey,
    recentBlockhash: BLOCKHASH,
    instructions,
  }).compileToV0Message()
  const tx = new VersionedTransaction(message)
  tx.sign([vault])
  return Buffer.from(tx.serialize()).toString('base64')
}

const check = (base64: string) => checkWithdraw(base64, owner.publicKey, vault.publicKey, mint, MAX_FEE)

function refused(base64: string, why: RegExp): void {
  assert.throws(
    () => check(base64),
    (e: GpunetError) =>
      e instanceof GpunetError &&
      e.code === 'withdraw_refused' &&
      e.exitCode === ExitCode.UNAVAILABLE &&
      why.test(e.message),
  )
}

describe('withdraw transaction check', () => {
  it("takes the network manager's withdraw, legacy or v0, and reads what it returns", () => {
    for (const base64 of [legacy(honest()), v0(honest())]) {
      const {plan, transaction} = check(base64)
      assert.deepEqual(plan, {lamports: 5_000_000n, tokens: 2_500_000n, closes: []})
      assert.ok(transaction.message.staticAccountKeys[0]!.equals(owner.publicKey))
    }
  })

  it("takes gpunet's manager's withdraw: a plain transfer, then the vault's token account closed to the owner", () => {
    const {plan} = check(
      legacy([
        createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, ownerTokens, owner.publicKey, mint),
        createTransferInstruction(vaultTokens, ownerTokens, vault.publicKey, 9n),
        createCloseAccountInstruction(vaultTokens, owner.publicKey, vault.publicKey),
        SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: owner.publicKey, lamports: 3}),
      ]),
    )
    assert.deepEqual(plan, {lamports: 3n, tokens: 9n, closes: [vaultTokens]})
    refused(
      legacy([createCloseAccountInstruction(vaultTokens, stranger.publicKey, vault.publicKey)]),
      /closes a token account/,
    )
  })

  it('takes a plain token transfer and a modest compute budget', () => {
    const {plan} = check(
      legacy([
        ComputeBudgetProgram.setComputeUnitLimit({units: 50_000}),
        ComputeBudgetProgram.setComputeUnitPrice({microLamports: 10_000}),
        createTransferInstruction(vaultTokens, ownerTokens, vault.publicKey, 7n),
      ]),
    )
    assert.equal(plan.tokens, 7n)
  })

  it('refuses a transfer out of the wallet, or from the vault to anyone else', () => {
    refused(
      legacy([SystemProgram.transfer({fromPubkey: owner.publicKey, toPubkey: stranger.publicKey, lamports: 1})]),
      /system instruction/,
    )
    refused(
      legacy([SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: stranger.publicKey, lamports: 1})]),
      /system instruction/,
    )
  })

  it("refuses a token transfer by the owner's authority, or to another token account", () => {
    const strangerTokens = getAssociatedTokenAddressSync(mint, stranger.publicKey, true)
    refused(legacy([createTransferInstruction(ownerTokens, strangerTokens, owner.publicKey, 1n)]), /token instruction/)
    refused(legacy([createTransferInstruction(vaultTokens, strangerTokens, vault.publicKey, 1n)]), /token instruction/)
  })

  it('refuses another fee payer, another signer, another program, and a priority fee past the cap', () => {
    refused(legacy(honest(), vault.publicKey), /fee payer/)
    const extra = SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: owner.publicKey, lamports: 1})
    extra.keys.push({pubkey: stranger.publicKey, isSigner: true, isWritable: false})
    refused(legacy([extra], owner.publicKey, [vault, stranger]), /someone other/)
    refused(legacy([{programId: Keypair.generate().publicKey, keys: [], data: Buffer.alloc(0)}]), /calls the program/)
    refused(
      legacy([
        ComputeBudgetProgram.setComputeUnitLimit({units: 1_400_000}),
        ComputeBudgetProgram.setComputeUnitPrice({microLamports: 1_000_000_000}),
        ...honest(),
      ]),
      /priority fee/,
    )
  })

  it('refuses what is no transaction, and a token account created for someone else', () => {
    refused(Buffer.from('not a transaction').toString('base64'), /not a Solana transaction/)
    const strangerTokens = getAssociatedTokenAddressSync(mint, stranger.publicKey, true)
    refused(
      legacy([
        createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, strangerTokens, stranger.publicKey, mint),
      ]),
      /token account other than your own/,
    )
  })

  // Without a compute-unit limit the runtime allows 200,000 units per instruction, and the wallet pays the price on
  // every one: priced as 200,000 in all, a hostile manager adds instructions and the wallet pays several caps.
  it('prices a transaction without a compute-unit limit at 200,000 units per instruction', () => {
    const priced = (microLamports: number) =>
      legacy([ComputeBudgetProgram.setComputeUnitPrice({microLamports}), ...honest()])
    // 4 instructions: 800,000 units. At 1,250,000 micro-lamports a unit that is the cap of 1,000,000 lamports exactly.
    assert.equal(check(priced(1_250_000)).plan.tokens, 2_500_000n)
    // A lamport more (lamports round down) is past the cap, though 200,000 units alone would cost a quarter of it.
    refused(priced(1_250_002), /priority fee/)
    refused(priced(2_000_000), /priority fee/)
    // A limit given is what is priced, however many instructions there are.
    const limited = legacy([
      ComputeBudgetProgram.setComputeUnitLimit({units: 100_000}),
      ComputeBudgetProgram.setComputeUnitPrice({microLamports: 10_000_000}),
      ...honest(),
    ])
    assert.equal(check(limited).plan.lamports, 5_000_000n)
  })

  // Each instruction is read by its program, kind and data length: one that looks like an allowed kind but is another
  // (or carries more bytes than that kind has) is refused, since the wallet's signature would authorize it too.
  it('refuses instructions of another kind or shape than the allowed ones', () => {
    const raw = (programId: PublicKey, keys: [PublicKey, boolean][], data: number[] | Buffer) => ({
      programId,
      keys: keys.map(([pubkey, isSigner]) => ({pubkey, isSigner, isWritable: true})),
      data: Buffer.from(data),
    })
    const transferData = (kind: number, extra = 0) => {
      const data = Buffer.alloc(12 + extra)
      data.writeUInt32LE(kind, 0)
      data.writeBigUInt64LE(5n, 4)
      return data
    }
    const system = SystemProgram.programId
    const toOwner: [PublicKey, boolean][] = [
      [vault.publicKey, true],
      [owner.publicKey, false],
    ]
    refused(legacy([raw(system, toOwner, transferData(0))]), /system instruction/)
    refused(legacy([raw(system, toOwner, transferData(2, 1))]), /system instruction/)
    assert.equal(check(legacy([raw(system, toOwner, transferData(2))])).plan.lamports, 5n)

    // CloseAccount is one byte: with more, it is read as a transfer, which it is not.
    const close: [PublicKey, boolean][] = [
      [vaultTokens, false],
      [owner.publicKey, false],
      [vault.publicKey, true],
    ]
    refused(legacy([raw(TOKEN_PROGRAM_ID, close, [9, 0])]), /token instruction/)
    // Transfer (3) is 9 bytes, TransferChecked (12) 10 and names the mint; nothing else moves tokens.
    const amount = (kind: number, length: number) => {
      const data = Buffer.alloc(length)
      data[0] = kind
      data.writeBigUInt64LE(4n, 1)
      return data
    }
    const plain: [PublicKey, boolean][] = [
      [vaultTokens, false],
      [ownerTokens, false],
      [vault.publicKey, true],
    ]
    const checked: [PublicKey, boolean][] = [
      [vaultTokens, false],
      [mint, false],
      [ownerTokens, false],
      [vault.publicKey, true],
    ]
    assert.equal(check(legacy([raw(TOKEN_PROGRAM_ID, plain, amount(3, 9))])).plan.tokens, 4n)
    assert.equal(check(legacy([raw(TOKEN_PROGRAM_ID, checked, [...amount(12, 9), 6])])).plan.tokens, 4n)
    refused(legacy([raw(TOKEN_PROGRAM_ID, plain, amount(3, 10))]), /token instruction/)
    refused(legacy([raw(TOKEN_PROGRAM_ID, checked, amount(12, 9))]), /token instruction/)
    refused(legacy([raw(TOKEN_PROGRAM_ID, plain, amount(4, 9))]), /token instruction/)
    refused(legacy([raw(TOKEN_PROGRAM_ID, checked, amount(3, 10))]), /token instruction/)
    const otherMint = Keypair.generate().publicKey
    refused(
      legacy([createTransferCheckedInstruction(vaultTokens, otherMint, ownerTokens, vault.publicKey, 1n, 6)]),
      /token instruction/,
    )
    // A transfer naming too few accounts has no authority to check.
    refused(
      legacy([
        raw(
          TOKEN_PROGRAM_ID,
          [
            [vaultTokens, false],
            [ownerTokens, false],
          ],
          amount(3, 9),
        ),
      ]),
      /token instruction/,
    )
    refused(
      legacy([
        raw(
          TOKEN_PROGRAM_ID,
          [
            [vaultTokens, false],
            [mint, false],
            [ownerTokens, false],
          ],
          [...amount(12, 9), 6],
        ),
      ]),
      /token instruction/,
    )

    // The associated token program: Create (no data, or 0) and CreateIdempotent (1) of the owner's account only.
    const ata: [PublicKey, boolean][] = [
      [owner.publicKey, true],
      [ownerTokens, false],
      [owner.publicKey, false],
      [mint, false],
      [system, false],
      [TOKEN_PROGRAM_ID, false],
    ]
    for (const data of [[], [0], [1]]) check(legacy([raw(ASSOCIATED_TOKEN_PROGRAM_ID, ata, data)]))
    for (const data of [[2], [1, 0]])
      refused(legacy([raw(ASSOCIATED_TOKEN_PROGRAM_ID, ata, data)]), /token account other than your own/)
    const wrong = (i: number, key: PublicKey) =>
      ata.map((k, j) => (j === i ? ([key, false] as [PublicKey, boolean]) : k))
    for (const [i, key] of [
      [1, vaultTokens],
      [2, stranger.publicKey],
      [3, otherMint],
    ] as const)
      refused(legacy([raw(ASSOCIATED_TOKEN_PROGRAM_ID, wrong(i, key), [1])]), /token account other than your own/)

    // The compute budget: SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64) only.
    const budget = ComputeBudgetProgram.programId
    refused(legacy([raw(budget, [], [2, 0, 0, 1, 0, 0])]), /compute budget/)
    refused(legacy([raw(budget, [], [3, 0, 0, 0, 0, 0, 0, 0])]), /compute budget/)
    refused(legacy([raw(budget, [], [1, 0, 0, 1, 0])]), /compute budget/)
    check(legacy([raw(budget, [], [2, 0, 0, 1, 0]), raw(budget, [], [3, 1, 0, 0, 0, 0, 0, 0, 0])]))
  })

  it('names the fee payer it refuses, and refuses a v0 transaction that reads an address lookup table', () => {
    refused(legacy(honest(), vault.publicKey), new RegExp(`has ${vault.publicKey.toBase58()} as its fee payer`))
    const table = new AddressLookupTableAccount({
      key: Keypair.generate().publicKey,
      state: {
        deactivationSlot: 2n ** 64n - 1n,
        lastExtendedSlot: 0,
        lastExtendedSlotStartIndex: 0,
        addresses: [ownerTokens],
      },
    })
    const message = new TransactionMessage({
      payerKey: owner.publicKey,
      recentBlockhash: BLOCKHASH,
      instructions: [createTransferInstruction(vaultTokens, ownerTokens, vault.publicKey, 1n)],
    }).compileToV0Message([table])
    assert.equal(message.addressTableLookups.length, 1)
    const tx = new VersionedTransaction(message)
    tx.sign([vault])
    refused(Buffer.from(tx.serialize()).toString('base64'), /address lookup tables/)
  })
})
