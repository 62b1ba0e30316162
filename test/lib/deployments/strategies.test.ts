import {strict as assert} from 'node:assert'

import {extendLeadMs, jobTimeoutSeconds} from '../../../src/lib/deployments/strategies/durations.js'
import type {DueTask, JobOnChain, PlanInput} from '../../../src/lib/deployments/strategies/plan.js'
import {planSimpleExtend} from '../../../src/lib/deployments/strategies/simple-extend.js'
import {planSimple} from '../../../src/lib/deployments/strategies/simple.js'
import type {DeploymentRow, TaskRow} from '../../../src/lib/deployments/types.js'
import {chainJob, deploymentRow, planInput, taskRow} from '../../helpers/strategy-rows.js'

const NOW = 1_800_000_000_000

const deployment = (change: Partial<DeploymentRow> = {}) => deploymentRow(NOW, change)
// Started 30 s before NOW, created 50 s before.
const job = (name: string, change: Partial<JobOnChain> = {}) =>
  chainJob(NOW, name, 30, {created_at: NOW - 50_000, ...change})
const task = (change: Partial<TaskRow>) => taskRow(NOW, change)

const extensions = (tasks: DueTask[]) => tasks.filter((t) => t.task === 'EXTEND')

const input = (change: Partial<PlanInput>) => planInput(NOW, deployment(), change)

describe('deployment strategies (pure)', () => {
  describe('durations', () => {
    it('the extend lead is 10% of the timeout, clamped to 60..300 s, divided by time_scale', () => {
      assert.equal(extendLeadMs({timeout: 60, time_scale: 1}), 300_000) // 10% = 360 s, clamped to 300
      assert.equal(extendLeadMs({timeout: 30, time_scale: 1}), 180_000) // 10% of 1800 s
      assert.equal(extendLeadMs({timeout: 5, time_scale: 1}), 60_000) // 30 s, raised to 60
      assert.equal(extendLeadMs({timeout: 30, time_scale: 10}), 18_000)
    })
    it('jobs are listed and extended for the timeout in seconds, divided by time_scale', () => {
      assert.equal(jobTimeoutSeconds({timeout: 60, time_scale: 1}), 3600)
      assert.equal(jobTimeoutSeconds({timeout: 10, time_scale: 20}), 30)
    })
  })

  describe('SIMPLE', () => {
    it('a starting deployment lists every replica in one task and becomes RUNNING', () => {
      const plan = planSimple(input({deployment: deployment({status: 'STARTING'})}))
      assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 2, due_at: NOW}])
      assert.equal(plan.status, 'RUNNING')
    })
    it('lists nothing while a LIST is open or the replicas run', () => {
      assert.deepEqual(planSimple(input({openTasks: [task({limit: 2})]})).tasks, [])
      assert.deepEqual(planSimple(input({jobs: [job('a'), job('b')]})).tasks, [])
    })
    it('a replica-count raise lists the shortfall', () => {
      const plan = planSimple(input({deployment: deployment({replicas: 3}), jobs: [job('a'), job('b')]}))
      assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 1, due_at: NOW}])
    })
    it('a replica-count cut stops the excess, queued jobs first', () => {
      const plan = planSimple(
        input({deployment: deployment({replicas: 1}), jobs: [job('a'), job('b', {state: 'QUEUED', timeStart: 0})]}),
      )
      assert.deepEqual(plan.tasks, [{task: 'STOP', job: 'b', due_at: NOW}])
      assert.deepEqual(plan.stopping, ['b'])
    })
    it('a job that ends on its own is not replaced; with none left the deployment is STOPPED', () => {
      const ended = job('a', {state: 'COMPLETED'})
      const one = planSimple(input({jobs: [ended, job('b')]}))
      assert.deepEqual(one.tasks, [])
      const none = planSimple(input({jobs: [ended, job('b', {state: 'STOPPED'})]}))
      assert.equal(none.status, 'STOPPED')
    })
    it('a stop stops every live job once and cancels what is pending; STOPPED once none is left', () => {
      const list = task({limit: 1})
      const stopB = task({task: 'STOP', job: 'b'})
      const plan = planSimple(
        input({deployment: deployment({status: 'STOPPING'}), jobs: [job('a'), job('b')], openTasks: [list, stopB]}),
      )
      assert.deepEqual(plan.tasks, [{task: 'STOP', job: 'a', due_at: NOW}])
      assert.deepEqual(plan.cancel, [list.id])
      assert.equal(plan.status, undefined)
      const done = planSimple(
        input({deployment: deployment({status: 'STOPPING'}), jobs: [job('a', {state: 'STOPPED'})]}),
      )
      assert.equal(done.status, 'STOPPED')
    })
    it('a stop waits for a task with a transaction in flight before calling the deployment STOPPED', () => {
      const inFlight = task({limit: 1, status: 'PROCESSING'})
      const plan = planSimple(input({deployment: deployment({status: 'STOPPING'}), openTasks: [inFlight]}))
      assert.equal(plan.status, undefined)
      assert.deepEqual(plan.cancel, [])
    })
    it('a deployment whose start was refused for want of the deposit lists nothing once funded', () => {
      const refused = deployment({status: 'INSUFFICIENT_FUNDS', started_at: null})
      assert.deepEqual(planSimple(input({deployment: refused})).tasks, [])
      assert.deepEqual(planSimple(input({deployment: {...refused, started_at: NOW}})).tasks, [
        {task: 'LIST', limit: 2, due_at: NOW},
      ])
    })
    it('a draft or stopped deployment wants nothing', () => {
      for (const status of ['DRAFT', 'STOPPED', 'ARCHIVED'] as const)
        assert.deepEqual(planSimple(input({deployment: deployment({status})})).tasks, [])
    })
  })

  describe('SIMPLE-EXTEND', () => {
    it('schedules each running job’s extension at its end minus the lead', () => {
      const a = job('a', {timeStart: 1000, timeout: 3600})
      const plan = planSimpleExtend(input({jobs: [a, job('b', {state: 'QUEUED', timeStart: 0})]}))
      assert.deepEqual(extensions(plan.tasks), [{task: 'EXTEND', job: 'a', due_at: (1000 + 3600) * 1000 - 300_000}])
    })
    it('the lead is scaled: timeout 10 min at time_scale 20 extends 3 s before a 30 s job ends', () => {
      const d = deployment({timeout: 10, time_scale: 20})
      const plan = planSimpleExtend(input({deployment: d, jobs: [job('a', {timeStart: 500, timeout: 30})]}))
      assert.deepEqual(extensions(plan.tasks), [{task: 'EXTEND', job: 'a', due_at: 530_000 - 3000}])
    })
    it('one extension open per job; none for a job being stopped; a moot one is cancelled', () => {
      const open = task({task: 'EXTEND', job: 'a', due_at: NOW + 1000})
      const one = deployment({replicas: 1})
      assert.deepEqual(planSimpleExtend(input({deployment: one, jobs: [job('a')], openTasks: [open]})).tasks, [])
      assert.deepEqual(
        planSimpleExtend(
          input({deployment: one, jobs: [job('a', {stop_requested: true}), job('b', {state: 'QUEUED'})]}),
        ).tasks,
        [],
      )
      const moot = task({task: 'EXTEND', job: 'x'})
      const plan = planSimpleExtend(input({jobs: [job('x', {state: 'STOPPED'}), job('a')], openTasks: [moot]}))
      assert.ok(plan.cancel.includes(moot.id))
    })
    it('a stopping deployment extends nothing', () => {
      const plan = planSimpleExtend(input({deployment: deployment({status: 'STOPPING'}), jobs: [job('a')]}))
      assert.deepEqual(
        plan.tasks.map((t) => t.task),
        ['STOP'],
      )
    })
  })
})
