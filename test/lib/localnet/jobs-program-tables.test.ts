/**
 * The localnet jobs program's tables against the reference, without a chain: each instruction's accounts (order,
 * writable, signer) as the IDL declares them, and every error's number and message as reference section 5 gives
 * them. jobs-program.test.ts proves the behaviour; these run first in the `jobs-program` mutation area, so a
 * mutant of a table (built when the module loads, so every test would otherwise run for it) is caught at once.
 */
import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'

import {PublicKey} from '@solana/web3.js'

import {AnchorError, JobsError, NosanaError, StakingError} from '../../../src/lib/localnet/jobs-program/errors.js'
import {
  findMetadataAddress,
  REFLECTION_ACCOUNT_DISCRIMINATOR,
  REFLECTION_ACCOUNT_SPACE,
  STAKE_ACCOUNT_DISCRIMINATOR,
  verifiedCollection,
} from '../../../src/lib/localnet/jobs-program/foreign.js'
import {INSTRUCTIONS} from '../../../src/lib/localnet/jobs-program/instructions.js'

interface Idl {
  instructions: {name: string; accounts: {name: string; isMut: boolean; isSigner: boolean}[]}[]
  errors: {code: number; name: string; msg: string}[]
}
/** The copy of reference/jobs-program-idl.json the localnet ships (equal to the reference). */
const IDL = JSON.parse(
  readFileSync(new URL('../../../src/lib/localnet/jobs-program/idl.json', import.meta.url), 'utf8'),
) as Idl

/**
 * The IDL's accounts as the deployed program takes them (reference section 4, which the IDL predates in two ways):
 * the `run` of `list` and `work` is an UncheckedAccount whose signature a constraint requires (MissingSignature,
 * 6003), not an Anchor Signer; and `finish` takes `payer_run` before `payer_job` and no `project`.
 */
function deployed(
  name: string,
  accounts: Idl['instructions'][number]['accounts'],
): Idl['instructions'][number]['accounts'] {
  if (name === 'list' || name === 'work') {
    return accounts.map((a) => (a.name === 'run' ? {...a, isSigner: false} : a))
  }
  if (name !== 'finish') return accounts
  const byName = new Map(accounts.map((a) => [a.name, a]))
  const order = [
    'job',
    'run',
    'market',
    'vault',
    'deposit',
    'user',
    'payerRun',
    'payerJob',
    'authority',
    'tokenProgram',
  ]
  return order.map((n) => byName.get(n)!)
}

/** A Metaplex MetadataV1 account's data (reference 7): the prefix the program decodes, then zeros to 679 bytes. */
function metadataV1(
  collection: PublicKey,
  options: {name?: string; creators?: number; editionNonce?: number; tokenStandard?: number} = {},
): Buffer {
  const u32 = (n: number) => {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(n)
    return b
  }
  const text = (s: string) => [u32(Buffer.byteLength(s)), Buffer.from(s)]
  const option = (value?: number) => Buffer.from(value === undefined ? [0] : [1, value])
  const creators = options.creators ?? 0
  const data = Buffer.concat([
    Buffer.from([4]), // MetadataV1
    Buffer.alloc(64, 7), // update authority, mint
    ...text(options.name ?? ''),
    ...text(options.name ? 'NODE' : ''),
    ...text(options.name ? 'https://example.com/node.json' : ''),
    Buffer.from([0xf4, 0x01]), // seller fee: 500 basis points
    ...(creators === 0
      ? [Buffer.from([0])]
      : [Buffer.from([1]), u32(creators), ...Array.from({length: creators}, () => Buffer.alloc(34, 9))]),
    Buffer.from([1, 1]), // primary sale happened, is mutable
    option(options.editionNonce),
    option(options.tokenStandard),
    Buffer.from([1, 1]), // collection: Some, verified
    collection.toBuffer(),
  ])
  return Buffer.concat([data, Buffer.alloc(679 - data.length)])
}

describe('localnet jobs program: its tables against the reference', () => {
  it('declares every instruction of the IDL, in its order', () => {
    assert.deepEqual(
      Object.keys(INSTRUCTIONS),
      IDL.instructions.map((i) => i.name),
    )
  })

  for (const instruction of IDL.instructions) {
    it(`${instruction.name}: the accounts of reference section 4, each writable and signer as declared`, () => {
      const declared = INSTRUCTIONS[instruction.name as keyof typeof INSTRUCTIONS].accounts.map((a) => ({
        name: a.name,
        isMut: a.mut === true,
        // A Signer, or an account `init` creates at a fresh key (which must sign for its creation).
        isSigner: a.kind === 'signer' || a.init !== undefined,
      }))
      assert.deepEqual(declared, deployed(instruction.name, instruction.accounts))
    })
  }

  it('reads the foreign accounts as reference 1.3 and 2.6 lay them out', () => {
    assert.equal(STAKE_ACCOUNT_DISCRIMINATOR.toString('hex'), '509e437c32bdc0ff')
    assert.equal(REFLECTION_ACCOUNT_DISCRIMINATOR.toString('hex'), 'cd99a036ef1adbbc')
    // Discriminator, three u128 (rate, total reflection, total xnos), the vault and its bump.
    assert.equal(REFLECTION_ACCOUNT_SPACE, 8 + 16 * 3 + 32 + 1)
    const mint = new PublicKey('nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7')
    const metaplex = new PublicKey('metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s')
    const [expected] = PublicKey.findProgramAddressSync(
      [Buffer.from('metadata'), metaplex.toBuffer(), mint.toBuffer()],
      metaplex,
    )
    assert.ok(findMetadataAddress(mint).equals(expected))
  })

  describe("an access NFT's metadata: the verified collection behind MetadataV1's prefix (reference 7)", () => {
    const collection = new PublicKey('nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7')

    it('reads the name, symbol and uri at their u32 little-endian lengths', () => {
      assert.ok(verifiedCollection(metadataV1(collection, {name: 'Nosana Node #1'}))?.equals(collection))
    })

    it('skips the creators: a u32 little-endian count, then 34 bytes each', () => {
      assert.ok(verifiedCollection(metadataV1(collection, {creators: 2}))?.equals(collection))
    })

    it('skips an edition nonce that is present: its flag and its byte', () => {
      assert.ok(verifiedCollection(metadataV1(collection, {editionNonce: 254}))?.equals(collection))
    })

    it('skips a token standard that is present: its flag and its byte', () => {
      assert.ok(verifiedCollection(metadataV1(collection, {tokenStandard: 0}))?.equals(collection))
    })
  })

  it("has the jobs program's own errors as the IDL lists them (5.1)", () => {
    assert.deepEqual(
      Object.values(JobsError).map((e) => ({code: e.code, name: e.name, msg: e.message})),
      IDL.errors,
    )
  })

  // 6004, 6005, 6009 and 6010 are never raised by the jobs program, so the localnet does not carry them.
  it("has nosana-common's errors the jobs program raises, as reference 5.2 gives them", () => {
    assert.deepEqual(
      Object.values(NosanaError).map((e) => [e.code, e.name, e.message]),
      [
        [6000, 'Unauthorized', 'This account is not authorized to perform this action.'],
        [6001, 'InvalidOwner', 'This account is owned by an invalid program.'],
        [6002, 'LamportsNonNull', 'This account has lamports.'],
        [6003, 'MissingSignature', 'This account is missing a signature.'],
        [6006, 'InvalidMint', 'This mint is invalid.'],
        [6007, 'InvalidVault', 'This account has an invalid vault.'],
        [6008, 'InvalidPayer', 'This payer account is not valid.'],
        [6011, 'InvalidATA', 'This Associated Token Account is not valid.'],
      ],
    )
  })

  it("has staking's InvalidStakeAccount as reference 5.3 gives it", () => {
    assert.deepEqual(
      Object.values(StakingError).map((e) => [e.code, e.name, e.message]),
      [[6012, 'InvalidStakeAccount', 'This stake does not belong to the authority.']],
    )
  })

  it("has Anchor's errors as reference 5.4 gives them", () => {
    assert.deepEqual(
      Object.values(AnchorError).map((e) => [e.code, e.name, e.message]),
      [
        [101, 'InstructionFallbackNotFound', 'Fallback functions are not supported'],
        [102, 'InstructionDidNotDeserialize', 'The program could not deserialize the given instruction'],
        [2000, 'ConstraintMut', 'A mut constraint was violated'],
        [2002, 'ConstraintSigner', 'A signer constraint was violated'],
        [2006, 'ConstraintSeeds', 'A seeds constraint was violated'],
        [2011, 'ConstraintClose', 'A close constraint was violated'],
        [2040, 'ConstraintDuplicateMutableAccount', 'A duplicate mutable account constraint was violated'],
        [3001, 'AccountDiscriminatorNotFound', 'No discriminator was found on the account'],
        [3002, 'AccountDiscriminatorMismatch', 'Account discriminator did not match what was expected'],
        [3003, 'AccountDidNotDeserialize', 'Failed to deserialize the account'],
        [3004, 'AccountDidNotSerialize', 'Failed to serialize the account'],
        [3005, 'AccountNotEnoughKeys', 'Not enough account keys given to the instruction'],
        [3007, 'AccountOwnedByWrongProgram', 'The given account is owned by a different program than expected'],
        [3008, 'InvalidProgramId', 'Program ID was not as expected'],
        [3009, 'InvalidProgramExecutable', 'Program account is not executable'],
        [3010, 'AccountNotSigner', 'The given account did not sign'],
        [3012, 'AccountNotInitialized', 'The program expected this account to be already initialized'],
        [3015, 'AccountSysvarMismatch', 'The given public key does not match the required sysvar'],
        [
          4101,
          'TryingToInitPayerAsProgramAccount',
          'You cannot/should not initialize the payer account as a program account',
        ],
      ],
    )
  })
})
