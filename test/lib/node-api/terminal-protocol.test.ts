/**
 * The network's `/terminal` grant (issue 40): the exact text the network's clients sign (nosana-kit's tests give it
 * line by line), and every way the localnet's node refuses one.
 */
import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import {
  checkTerminalGrant,
  signTerminalGrant,
  TERMINAL_GRANT_TTL_MS,
  terminalGrantText,
} from '../../../src/lib/node-api/terminal-protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'

const POSTER = Keypair.generate()
const JOB = Keypair.generate().publicKey.toBase58()
const NODE = Keypair.generate().publicKey.toBase58()
const NOW = Date.parse('2026-08-21T12:00:00.000Z')
const sign = (key: Keypair) => (m: Uint8Array) => walletFromBytes(key.secretKey).sign(m)
const scope = {poster: POSTER.publicKey.toBytes(), job: JOB, node: NODE, network: 'localnet', nowMs: NOW}

describe('the /terminal grant', () => {
  it('is the text the network signs, line by line', () => {
    const text = terminalGrantText({
      job: 'J',
      node: 'N',
      expiresAt: '2026-08-21T12:04:00.000Z',
      op: 'web',
      network: 'devnet',
    })
    assert.equal(
      text,
      'Nosana Terminal Authorization v1\n\njob: J\nnode: N\nexpiresAt: 2026-08-21T12:04:00.000Z\nop: web\nnetwork: devnet\naudience: nosana-web-terminal',
    )
    const grant = signTerminalGrant(sign(POSTER), {job: JOB, node: NODE, network: 'localnet'}, NOW)
    assert.match(grant.message, /expiresAt: 2026-08-21T12:04:00.000Z\nnetwork: localnet\n/)
    assert.equal(Buffer.from(grant.signature, 'base64').length, 64)
    assert.equal(TERMINAL_GRANT_TTL_MS, 4 * 60 * 1000)
  })

  it("opens with the poster's grant for this job, node and network", () => {
    const grant = signTerminalGrant(sign(POSTER), {job: JOB, node: NODE, network: 'localnet', op: 'main'}, NOW)
    assert.deepEqual(checkTerminalGrant({...grant, op: 'main'}, scope), {ok: true})
    // A grant without a network line is taken, as the network's nodes skip that check then.
    const message = terminalGrantText({job: JOB, node: NODE, expiresAt: new Date(NOW + 60_000).toISOString()})
    const signature = Buffer.from(sign(POSTER)(Buffer.from(message))).toString('base64')
    assert.deepEqual(checkTerminalGrant({message, signature}, scope), {ok: true})
  })

  it('refuses another signer, job, node, network or operation, and an expired or too long grant', () => {
    const refused = (reason: RegExp, grant: {message: string; signature: string}, op?: string, now = NOW) => {
      const verdict = checkTerminalGrant({...grant, ...(op === undefined ? {} : {op})}, {...scope, nowMs: now})
      assert.equal(verdict.ok, false)
      assert.match((verdict as {reason: string}).reason, reason)
    }
    const base = {job: JOB, node: NODE, network: 'localnet'}
    refused(/not the job poster's/, signTerminalGrant(sign(Keypair.generate()), base, NOW))
    refused(/not for this job and node/, signTerminalGrant(sign(POSTER), {...base, job: NODE}, NOW))
    refused(/not for this job and node/, signTerminalGrant(sign(POSTER), {...base, node: JOB}, NOW))
    refused(/for mainnet/, signTerminalGrant(sign(POSTER), {...base, network: 'mainnet'}, NOW))
    refused(/another operation/, signTerminalGrant(sign(POSTER), {...base, op: 'a'}, NOW), 'b')
    refused(/another operation/, signTerminalGrant(sign(POSTER), base, NOW), 'b')
    refused(/expired/, signTerminalGrant(sign(POSTER), base, NOW), undefined, NOW + TERMINAL_GRANT_TTL_MS)
    refused(/too long/, signTerminalGrant(sign(POSTER), base, NOW + 10 * 60_000))
    const grant = signTerminalGrant(sign(POSTER), base, NOW)
    refused(/malformed|not for this/, {...grant, message: `${grant.message}\nextra: line`})
    refused(/not a terminal grant/, {...grant, message: 'Hello Nosana Node!'})
    refused(/64 bytes/, {...grant, signature: 'abc'})
  })
})
