/**
 * The secrets service's login and token checks at their edges (issue 26, secrets survivors): text around a
 * timestamp or a bearer token, a token whose names are not all strings, and the last second of a run's paid time.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {activeRun, parseLogin, TokenIssuer} from '../../../../src/lib/secrets/service/auth.js'
import {ApiError} from '../../../../src/lib/http/api-error.js'
import {newAddress} from '../../../helpers/secrets.js'

/** The HTTP error `run` throws or rejects with: status and code. */
async function refusal(run: () => unknown): Promise<[number, string]> {
  try {
    await run()
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error))
    return [error.status, error.code]
  }
  assert.fail('expected a refusal')
}

describe('secrets service: login and token edges', () => {
  const login = (timestamp: unknown) => parseLogin({address: newAddress(), signature: '1'.repeat(64), timestamp})

  it('takes a timestamp of digits alone, as a number or a string', async () => {
    assert.equal(login('1700000000').timestamp, 1_700_000_000)
    assert.equal(login(1_700_000_000).timestamp, 1_700_000_000)
    assert.equal(login('-5').timestamp, -5)
    for (const text of ['x1700000000', '1700000000x', '1700000000 ', '', '1e9', '17000000000000000']) {
      assert.deepEqual(await refusal(() => login(text)), [400, 'invalid_timestamp'], JSON.stringify(text))
    }
  })

  it('reads a bearer token only from "Bearer <token>" and nothing else', async () => {
    const issuer = new TokenIssuer(randomBytes(32))
    const owner = newAddress()
    const now = 1_700_000_000
    const token = issuer.issue(owner, {kind: 'owner', owner}, now + 60, now)
    assert.deepEqual(await issuer.verify(`Bearer ${token}`, now), {kind: 'owner', owner})
    assert.deepEqual(await issuer.verify(`bearer  ${token}`, now), {kind: 'owner', owner})
    for (const header of [`xBearer ${token}`, `Bearer ${token} more`, `Basic ${token}`, token, undefined]) {
      assert.deepEqual(await refusal(() => issuer.verify(header, now)), [401, 'missing_token'], String(header))
    }
  })

  it('refuses a job token whose names are not all strings', async () => {
    const issuer = new TokenIssuer(randomBytes(32))
    const [node, job, poster] = [newAddress(), newAddress(), newAddress()]
    const now = 1_700_000_000
    const scope = {kind: 'job', node, job, poster, names: ['A', 7]} as never
    const token = issuer.issue(node, scope, now + 60, now)
    assert.deepEqual(await refusal(() => issuer.verify(`Bearer ${token}`, now)), [401, 'invalid_token'])
    const good = issuer.issue(node, {kind: 'job', node, job, poster, names: ['A', 'B']}, now + 60, now)
    assert.deepEqual(await issuer.verify(`Bearer ${good}`, now), {kind: 'job', job, poster, node, names: ['A', 'B']})
  })

  it("ends a run's access at the end of its paid time, to the second", () => {
    const node = newAddress()
    const record = {state: 'queued', timeout: 100, definition: 'Qm', runs: [{node, time: 1000}]} as never
    assert.ok(activeRun(record, node, 1099), 'the last second of the paid time')
    assert.equal(activeRun(record, node, 1100), undefined, 'over at time + timeout')
    assert.equal(activeRun(record, newAddress(), 1050), undefined, 'another node')
    assert.equal(activeRun({...(record as object), state: 'done'} as never, node, 1050), undefined, 'a done job')
  })
})
