import {strict as assert} from 'node:assert'
import type {ChildProcess} from 'node:child_process'
import {once} from 'node:events'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAccount, getAssociatedTokenAddressSync} from '@solana/spl-token'
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  sendAndConfirmTransaction,
  SystemProgram,
  Transaction,
} from '@solana/web3.js'

import {localnetFiles} from '../../../src/lib/localnet/paths.js'
import type {GenesisRecord} from '../../../src/lib/localnet/state.js'
import {decodeJobAccount} from '../../../src/lib/market/index.js'
import {writeKeypair} from '../../../src/lib/keys/wallet.js'
import {spawnForegroundLocalnet} from '../../helpers/cli-localnet.js'
import {startTestLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {listInstruction} from '../../helpers/market.js'

describe('localnet persistence', function () {
  this.timeout(60_000)

  it('keeps balances, token accounts and program accounts across stop and start', async () => {
    const first = await startTestLocalnet()
    const bob = Keypair.generate()
    await sendAndConfirmTransaction(
      first.connection,
      new Transaction().add(
        SystemProgram.transfer({
          fromPubkey: first.wallet.publicKey,
          toPubkey: bob.publicKey,
          lamports: 3 * LAMPORTS_PER_SOL,
        }),
      ),
      [first.wallet],
    )
    const walletLamports = await first.connection.getBalance(first.wallet.publicKey)
    const market = (await first.connection.getAccountInfo(first.market))!.data
    await first.close()

    const second = await startTestLocalnet({dataDir: first.dataDir, wallet: first.wallet})
    try {
      assert.equal(await second.connection.getBalance(bob.publicKey), 3 * LAMPORTS_PER_SOL)
      assert.equal(await second.connection.getBalance(first.wallet.publicKey), walletLamports)
      assert.ok(second.mint.equals(first.mint) && second.market.equals(first.market))
      assert.deepEqual((await second.connection.getAccountInfo(second.market))!.data, market)
      const tokens = await getAccount(
        second.connection,
        getAssociatedTokenAddressSync(second.mint, first.wallet.publicKey),
      )
      assert.equal(tokens.amount, 1000n * 10n ** 6n)
    } finally {
      await second.close()
      removeDir(first.dataDir)
    }
  })

  describe('after kill -9', () => {
    let child: ChildProcess | undefined
    const dataDir = tempDir()
    const walletPath = join(dataDir, 'wallet.json')
    const wallet = Keypair.generate()

    /** Runs the built CLI's `localnet start`, the process `localnet start --detach` leaves in the background. */
    async function spawnLocalnet(): Promise<{connection: Connection}> {
      const started = await spawnForegroundLocalnet(dataDir, {GPUNET_WALLET: walletPath})
      child = started.child
      return {connection: new Connection(started.status.rpcUrl!, 'confirmed')}
    }

    after(() => {
      child?.kill('SIGKILL')
      removeDir(dataDir)
    })

    // Plain sendTransaction calls, no confirmation subscription: a killed server must not leave web3.js
    // reconnecting a WebSocket, and an answered sendTransaction is what must survive.
    it('keeps every answered transaction, jobs program accounts included', async () => {
      writeKeypair(walletPath, wallet) // funded by the first start
      const {connection} = await spawnLocalnet()
      const payer = Keypair.generate()
      await connection.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL)
      const recipients = Array.from({length: 5}, () => Keypair.generate())
      for (const [i, to] of recipients.entries()) {
        const tx = new Transaction({feePayer: payer.publicKey, ...(await connection.getLatestBlockhash())})
        tx.add(
          SystemProgram.transfer({
            fromPubkey: payer.publicKey,
            toPubkey: to.publicKey,
            lamports: ((i + 1) * LAMPORTS_PER_SOL) / 10,
          }),
        )
        tx.sign(payer)
        await connection.sendRawTransaction(tx.serialize())
      }
      const payerLamports = await connection.getBalance(payer.publicKey)
      const genesis = JSON.parse(readFileSync(localnetFiles(dataDir).genesis, 'utf8')) as GenesisRecord
      const [programId, market, mint] = [genesis.programId, genesis.market, genesis.mint].map(
        (k) => new PublicKey(k),
      ) as [PublicKey, PublicKey, PublicKey]
      const job = Keypair.generate()
      const run = Keypair.generate()
      const list = new Transaction({feePayer: wallet.publicKey, ...(await connection.getLatestBlockhash())}).add(
        listInstruction({
          programId,
          market,
          mint,
          payer: wallet.publicKey,
          job: job.publicKey,
          run: run.publicKey,
          timeout: 600n,
        }),
      )
      list.sign(wallet, job, run)
      await connection.sendRawTransaction(list.serialize())

      child!.kill('SIGKILL')
      await once(child!, 'exit')

      const restarted = await spawnLocalnet()
      for (const [i, to] of recipients.entries()) {
        assert.equal(await restarted.connection.getBalance(to.publicKey), ((i + 1) * LAMPORTS_PER_SOL) / 10)
      }
      assert.equal(await restarted.connection.getBalance(payer.publicKey), payerLamports)
      // `list` queued the job or started it on the node waiting in the queue: either way its account survived.
      assert.ok(await restarted.connection.getAccountInfo(market), 'the market survived')
      const jobAccount = decodeJobAccount((await restarted.connection.getAccountInfo(job.publicKey))!.data)
      assert.equal(jobAccount.timeout, 600n)
      assert.ok(jobAccount.payer.equals(wallet.publicKey))
      child!.kill('SIGTERM')
      await once(child!, 'exit')
    })
  })
})
