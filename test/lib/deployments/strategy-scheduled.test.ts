import {strict as assert} from 'node:assert'

import {nextScheduled, scheduleProblem} from '../../../src/lib/deployments/schedule.js'
import {planScheduled} from '../../../src/lib/deployments/strategies/scheduled.js'
import type {PlanInput} from '../../../src/lib/deployments/strategies/plan.js'
import type {DeploymentRow, TaskRow} from '../../../src/lib/deployments/types.js'
import {deploymentRow, planInput, taskRow} from '../../helpers/strategy-rows.js'

// 2027-01-15T10:07:30Z
const NOW = Date.UTC(2027, 0, 15, 10, 7, 30)

const deployment = (change: Partial<DeploymentRow> = {}) =>
  deploymentRow(NOW, {
    name: 'batch',
    replicas: 3,
    timeout: 30,
    strategy: 'SCHEDULED',
    schedule: '*/15 * * * *',
    ...change,
  })

const listTask = (change: Partial<TaskRow> = {}) => taskRow(NOW, {id: 1, limit: 3, due_at: NOW + 60_000, ...change})

const input = (change: Partial<PlanInput>) => planInput(NOW, deployment(), change)

describe('SCHEDULED strategy (pure)', () => {
  it('waits for the next time of its cron (UTC) with a LIST of every replica, and becomes RUNNING', () => {
    const plan = planScheduled(input({deployment: deployment({status: 'STARTING'})}))
    assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 3, due_at: Date.UTC(2027, 0, 15, 10, 15)}])
    assert.equal(plan.status, 'RUNNING')
    const daily = planScheduled(input({deployment: deployment({schedule: '0 3 * * 1'})}))
    assert.deepEqual(daily.tasks, [{task: 'LIST', limit: 3, due_at: Date.UTC(2027, 0, 18, 3, 0)}], 'next Monday 03:00')
  })

  it('one listing waits at a time; once it ran, the next time after now', () => {
    assert.deepEqual(planScheduled(input({openTasks: [listTask()]})).tasks, [])
    const after = planScheduled(input({now: Date.UTC(2027, 0, 15, 10, 15, 2)}))
    assert.deepEqual(after.tasks, [{task: 'LIST', limit: 3, due_at: Date.UTC(2027, 0, 15, 10, 30)}])
  })

  it('a stopping deployment cancels the waiting listing and stops its jobs', () => {
    const running = {
      job: 'a',
      state: 'RUNNING' as const,
      timeStart: NOW / 1000 - 10,
      timeout: 1800,
      created_at: NOW - 20_000,
      stop_requested: false,
    }
    const plan = planScheduled(
      input({deployment: deployment({status: 'STOPPING'}), jobs: [running], openTasks: [listTask()]}),
    )
    assert.deepEqual(plan.cancel, [1])
    assert.deepEqual(plan.tasks, [{task: 'STOP', job: 'a', due_at: NOW}])
  })

  it('a schedule is a 5-field cron that fires again; anything else says why', () => {
    assert.equal(scheduleProblem('*/5 * * * *'), null)
    assert.equal(scheduleProblem('0 3 * * MON-FRI'), null)
    assert.match(scheduleProblem('* * * * * *')!, /not a 5-field cron expression.*exactly 5 parts/)
    assert.match(scheduleProblem('61 * * * *')!, /Invalid value for minute/)
    assert.match(scheduleProblem('every day')!, /not a 5-field cron expression/)
    assert.match(scheduleProblem('0 0 31 2 *')!, /never fires/)
    assert.match(scheduleProblem('')!, /must be a 5-field cron/)
    assert.match(scheduleProblem(5)!, /must be a 5-field cron/)
    assert.match(scheduleProblem(`${'1,'.repeat(150)}1 * * * *`)!, /at most 200 characters/)
    assert.equal(
      nextScheduled('0 * * * *', Date.UTC(2027, 0, 15, 10, 0)),
      Date.UTC(2027, 0, 15, 11, 0),
      'strictly after',
    )
  })
})
