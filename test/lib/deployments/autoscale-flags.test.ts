/** The CLI's checks of a policy and a budget (client-autoscale.ts): exit 2 before anything is sent. */
import {strict as assert} from 'node:assert'

import {
  budgetFromFlag,
  policyFromFlags,
  policyRequest,
  refuseOnHostedManager,
} from '../../../src/lib/deployments/client/client-autoscale.js'
import {ExitCode, GpunetError, isGpunetError} from '../../../src/lib/errors.js'
import {isHostedManager} from '../../../src/lib/manager-connection.js'

const usage = (code: string) => (e: unknown) => isGpunetError(e) && e.exitCode === ExitCode.USAGE && e.code === code

describe('autoscaling flags (exit 2, nothing sent)', () => {
  const good = {'min-replicas': 0, 'max-replicas': 3, 'target-concurrency': '2'}
  it('reads a policy, the window defaulting to 5 minutes and min to 1', () => {
    assert.deepEqual(policyFromFlags(good, 'SIMPLE-EXTEND'), {
      min_replicas: 0,
      max_replicas: 3,
      target_concurrency: 2,
      scale_down_after: 300,
    })
    const p = policyFromFlags({'max-replicas': 2, 'target-concurrency': '0.5', 'scale-down-after': '30s'}, 'INFINITE')
    assert.deepEqual([p?.min_replicas, p?.target_concurrency, p?.scale_down_after], [1, 0.5, 30])
    assert.equal(policyFromFlags({}, 'SIMPLE'), undefined)
  })
  it('keeps the members of the current policy a flag does not give', () => {
    const current = {min_replicas: 0, max_replicas: 4, target_concurrency: 3, scale_down_after: 120}
    assert.deepEqual(policyFromFlags({'max-replicas': 6}, 'SIMPLE-EXTEND', current), {...current, max_replicas: 6})
  })
  it('refuses each bad input of item 5', () => {
    const bad =
      (flags: Record<string, unknown>, strategy = 'SIMPLE-EXTEND') =>
      () =>
        policyFromFlags({...good, ...flags}, strategy)
    assert.throws(bad({'min-replicas': 4}), usage('min_above_max'))
    assert.throws(bad({'max-replicas': 101}), usage('invalid_max_replicas'))
    assert.throws(bad({'target-concurrency': '0'}), usage('invalid_target_concurrency'))
    assert.throws(bad({'target-concurrency': '-2'}), usage('invalid_target_concurrency'))
    assert.throws(bad({'target-concurrency': 'lots'}), usage('invalid_target_concurrency'))
    assert.throws(bad({'scale-down-after': '9s'}), usage('invalid_scale_down_after'))
    assert.throws(bad({'scale-down-after': '1500ms'}), usage('invalid_scale_down_after'))
    assert.throws(bad({}, 'SIMPLE'), usage('policy_strategy'))
    assert.throws(bad({}, 'SCHEDULED'), usage('policy_strategy'))
    assert.throws(() => policyFromFlags({'min-replicas': 0}, 'INFINITE'), usage('max_replicas_missing'))
    assert.throws(() => policyFromFlags({'max-replicas': 2}, 'INFINITE'), usage('target_concurrency_missing'))
  })
  it('reads a budget in tokens; refuses 0, a negative, more decimals than the token has, text', () => {
    assert.equal(budgetFromFlag('12.5'), 12.5)
    assert.equal(budgetFromFlag(undefined), undefined)
    for (const text of ['0', '-1', '1.0000001', 'ten', ''])
      assert.throws(() => budgetFromFlag(text), usage('invalid_budget'), text)
  })
  it("refuses a policy or a budget against the network's hosted manager, with the hint to front it", () => {
    assert.throws(
      () => refuseOnHostedManager(true, true),
      (e: unknown) => usage('autoscale_unsupported')(e) && /deployment serve/.test((e as GpunetError).hint ?? ''),
    )
    refuseOnHostedManager(true, false)
    refuseOnHostedManager(false, true)
    assert.equal(isHostedManager('https://dashboard.k8s.prd.nos.ci/api', 'https://dashboard.k8s.prd.nos.ci'), true)
    assert.equal(isHostedManager('http://127.0.0.1:9000', 'https://dashboard.k8s.prd.nos.ci'), false)
    assert.equal(isHostedManager('http://127.0.0.1:9000', null), false)
  })
  it("turns the manager's refusal of a policy into exit 2, and leaves other failures as they are", async () => {
    const refusal = new GpunetError('budget_below_deposit', 'too small', {exitCode: ExitCode.INVALID_INPUT})
    await assert.rejects(
      policyRequest(() => Promise.reject(refusal)),
      usage('budget_below_deposit'),
    )
    const other = new GpunetError('manager_error', 'down', {exitCode: ExitCode.UNAVAILABLE})
    await assert.rejects(
      policyRequest(() => Promise.reject(other)),
      (e: unknown) => e === other,
    )
  })
})
