/**
 * The network's manager's replica and timing rules, in every strategy's planner (pure): a scale to 0 keeps the
 * deployment RUNNING with no job and nothing spent, and a count above 0 lists again; a scale-down stops queued jobs
 * first, then the oldest running; rapid completion counts only jobs that COMPLETED, so scale-downs and rotations
 * never throttle; a raised timeout extends the running jobs by exactly the difference.
 */
import {strict as assert} from 'node:assert'

import {jobTimeoutSeconds, extendLeadMs, rotationLeadMs} from '../../../src/lib/deployments/strategies/durations.js'
import {STRATEGY_PLANS} from '../../../src/lib/deployments/strategies/index.js'
import {planInfinite} from '../../../src/lib/deployments/strategies/infinite.js'
import type {JobOnChain, Plan} from '../../../src/lib/deployments/strategies/plan.js'
import {selectJobsToStop} from '../../../src/lib/deployments/strategies/scale-down.js'
import {planSimpleExtend} from '../../../src/lib/deployments/strategies/simple-extend.js'
import {planSimple} from '../../../src/lib/deployments/strategies/simple.js'
import {type DeploymentRow, STRATEGIES, type TaskRow} from '../../../src/lib/deployments/types.js'
import {chainJob, deploymentRow, planInput, taskRow} from '../../helpers/strategy-rows.js'

const NOW = 1_800_000_000_000
const S = NOW / 1000

const row = (change: Partial<DeploymentRow> = {}) =>
  deploymentRow(NOW, {started_at: NOW - 3_600_000, throttle_rounds: 0, schedule: null, ...change})
const job = (name: string, ago: number, change: Partial<JobOnChain> = {}) => chainJob(NOW, name, ago, change)
const task = (change: Partial<TaskRow>) => taskRow(NOW, change)
const lists = (plan: Plan) => plan.tasks.filter((t) => t.task === 'LIST')
const stops = (plan: Plan) => plan.tasks.filter((t) => t.task === 'STOP').map((t) => (t as {job: string}).job)
const extensions = (plan: Plan) => plan.tasks.filter((t) => t.task === 'EXTEND')

/** The strategy's deployment with its own members (SCHEDULED's cron). */
function strategyRow(strategy: DeploymentRow['strategy'], change: Partial<DeploymentRow> = {}) {
  return row({strategy, ...(strategy === 'SCHEDULED' ? {schedule: '0 * * * *'} : {}), ...change})
}

describe('replica rules (pure planners)', () => {
  describe('scale to 0', () => {
    for (const strategy of STRATEGIES) {
      it(`${strategy}: every job stopped, nothing listed or extended, still RUNNING; then with no job still RUNNING`, () => {
        const d = strategyRow(strategy, {replicas: 0})
        // One job near its end (SIMPLE-EXTEND would extend it, INFINITE rotate it), one queued, a LIST waiting.
        const jobs = [job('old', 3500), job('q', 0, {state: 'QUEUED', timeStart: 0})]
        const openTasks = [task({task: 'LIST', limit: 1, due_at: NOW + 60_000})]
        const plan = STRATEGY_PLANS[strategy](planInput(NOW, d, {jobs, openTasks}))
        assert.deepEqual(stops(plan).sort(), ['old', 'q'])
        assert.deepEqual(lists(plan), [])
        assert.deepEqual(extensions(plan), [])
        assert.deepEqual(plan.cancel, [openTasks[0]!.id], 'the waiting LIST is dropped')
        assert.equal(plan.status, undefined, 'not STOPPED')
        if (strategy === 'INFINITE')
          assert.deepEqual(
            plan.events!.map((e) => e.type),
            ['JOB_SCALED_DOWN', 'JOB_SCALED_DOWN'],
            'scaled down, not rotated',
          )
        // Later: the jobs are over (stopped by the manager), nothing open.
        const over = jobs.map((j) => ({...j, state: 'STOPPED' as const, stop_requested: true, timeEnd: S}))
        const later = STRATEGY_PLANS[strategy](planInput(NOW + 600_000, d, {jobs: over}))
        assert.deepEqual(later.tasks, [])
        assert.equal(later.status, undefined, 'a deployment with no job at 0 replicas is not finished')
        // Started at 0 (scaled down before its first pass): RUNNING at once, nothing listed.
        const starting = STRATEGY_PLANS[strategy](planInput(NOW, {...d, status: 'STARTING'}))
        assert.equal(starting.status, 'RUNNING')
        assert.deepEqual(starting.tasks, [])
      })
    }

    for (const strategy of ['SIMPLE', 'SIMPLE-EXTEND', 'INFINITE'] as const) {
      it(`${strategy}: scaled from 0 to 3 (a new run), it lists 3 again`, () => {
        const earlier = [job('a', 900, {state: 'STOPPED', stop_requested: true, timeEnd: S - 300})]
        // updateReplicas starts a new run from 0: the jobs before count no more.
        const d = strategyRow(strategy, {replicas: 3, started_at: NOW - 1000})
        const plan = STRATEGY_PLANS[strategy](planInput(NOW, d, {jobs: earlier}))
        assert.deepEqual(lists(plan), [{task: 'LIST', limit: 3, due_at: NOW}])
      })
    }

    it('SCHEDULED: scaled from 0, the next time of its schedule lists the replicas again', () => {
      const plan = STRATEGY_PLANS.SCHEDULED(planInput(NOW, strategyRow('SCHEDULED', {replicas: 2})))
      const [list] = lists(plan)
      assert.equal(list?.task === 'LIST' && list.limit, 2)
      assert.ok(list!.due_at > NOW && list!.due_at <= NOW + 3_600_000)
    })
  })

  describe("scale-down: queued jobs first, then the oldest running (the network's selectJobsToStop)", () => {
    const jobs = [
      job('newest', 100),
      job('oldest', 3000),
      job('middle', 1000),
      job('q-late', 0, {state: 'QUEUED', timeStart: 0, created_at: NOW - 1000}),
      job('q-early', 0, {state: 'QUEUED', timeStart: 0, created_at: NOW - 9000}),
    ]

    it('selectJobsToStop orders them so', () => {
      assert.deepEqual(
        selectJobsToStop(jobs, 5).map((j) => j.job),
        ['q-early', 'q-late', 'oldest', 'middle', 'newest'],
      )
      assert.deepEqual(selectJobsToStop(jobs, 0), [])
    })

    for (const strategy of ['SIMPLE', 'SIMPLE-EXTEND', 'INFINITE'] as const) {
      it(`${strategy}: 5 -> 2 stops both queued and the oldest running`, () => {
        const plan = STRATEGY_PLANS[strategy](planInput(NOW, strategyRow(strategy, {replicas: 2}), {jobs}))
        assert.deepEqual(stops(plan).sort(), ['oldest', 'q-early', 'q-late'])
        assert.deepEqual(lists(plan), [])
      })
    }
  })

  describe('rapid completion counts only COMPLETED jobs', () => {
    const d = row({strategy: 'INFINITE', replicas: 2})
    /** Six jobs of this run that ran 10 s each and ended so. */
    const short = (change: Partial<JobOnChain>) =>
      Array.from({length: 6}, (_, i) =>
        job(`s${i}`, 200 + i * 20, {state: 'COMPLETED', timeEnd: S - 190 - i * 20, ...change}),
      )

    it('six jobs stopped by a scale-down or a rotation (STOPPED, or ended by the manager) do not throttle', () => {
      for (const stopped of [
        {state: 'STOPPED' as const},
        {state: 'STOPPED' as const, stop_requested: true},
        {stop_requested: true},
      ]) {
        const plan = planInfinite(planInput(NOW, d, {jobs: short(stopped)}))
        assert.deepEqual(lists(plan), [{task: 'LIST', limit: 2, due_at: NOW}], JSON.stringify(stopped))
        assert.equal(plan.throttleRounds, undefined)
        assert.ok(!(plan.events ?? []).some((e) => e.type.startsWith('RAPID_COMPLETION')))
      }
      // The same six that completed on their own: throttled.
      assert.deepEqual(lists(planInfinite(planInput(NOW, d, {jobs: short({})}))), [
        {task: 'LIST', limit: 2, due_at: NOW + 60_000},
      ])
    })

    it('a scale 2 -> 0 -> 2, over and over (each job stopped 10 s after its start), never throttles', () => {
      // Replicas scaled down and up again every minute: each time the jobs are stopped after 10 s.
      let deployment = row({strategy: 'INFINITE', replicas: 2, status: 'RUNNING', started_at: NOW})
      const jobs: JobOnChain[] = []
      let open: TaskRow[] = []
      let listed = 0
      for (let pass = 0, now = NOW; pass < 200; pass++, now += 5000) {
        deployment = {...deployment, replicas: Math.floor(pass / 2) % 2 === 0 ? 2 : 0}
        const plan = planInfinite({deployment, jobs, openTasks: open, now})
        assert.ok(!(plan.events ?? []).some((e) => e.type.startsWith('RAPID_COMPLETION')), `pass ${pass}`)
        for (const t of plan.tasks) {
          if (t.task === 'LIST')
            for (let i = 0; i < t.limit; i++)
              jobs.push(job(`j${listed++}`, 0, {timeStart: now / 1000, created_at: now}))
          if (t.task === 'STOP') {
            const stopped = jobs.find((j) => j.job === t.job)!
            // The stand-in chain's and the localnet's end of a running job: COMPLETED, by the manager's stop.
            Object.assign(stopped, {state: 'COMPLETED', timeEnd: now / 1000, stop_requested: true})
          }
        }
        for (const id of plan.stopping)
          Object.assign(
            jobs.find((j) => j.job === id)!,
            {stop_requested: true},
          )
        open = []
      }
      assert.ok(listed > 50, `${listed} listed`)
    })
  })

  describe('the extend rule: a raised timeout extends the running jobs', () => {
    const raised = (strategy: 'SIMPLE-EXTEND' | 'INFINITE', change: Partial<DeploymentRow> = {}) =>
      row({strategy, replicas: 2, timeout: 90, ...change})

    it('SIMPLE-EXTEND: each RUNNING job below the new timeout gets one EXTEND of the difference; its next EXTEND moves as much', () => {
      const d = raised('SIMPLE-EXTEND')
      const target = jobTimeoutSeconds(d)
      assert.equal(target, 5400)
      // a: listed at 60 min, its chain EXTEND waiting; b: already extended past 90 min; q: queued.
      const jobs = [job('a', 600), job('b', 600, {timeout: 7200}), job('q', 0, {state: 'QUEUED', timeStart: 0})]
      const chainExtend = task({task: 'EXTEND', job: 'a', due_at: (S - 600 + 3600) * 1000 - extendLeadMs(row())})
      const plan = planSimpleExtend(planInput(NOW, d, {jobs, openTasks: [chainExtend]}))
      const oneShots = extensions(plan).filter((t) => 'seconds' in t)
      assert.deepEqual(oneShots, [{task: 'EXTEND', job: 'a', seconds: 1800, due_at: NOW}], 'b is past it, q queued')
      assert.deepEqual(plan.cancel, [chainExtend.id])
      // The one-shot landed: the job is at 90 min on chain; its chain EXTEND comes back 30 min later than it was.
      const landed = [{...jobs[0]!, timeout: 5400}, jobs[1]!, jobs[2]!]
      const after = planSimpleExtend(planInput(NOW + 5000, d, {jobs: landed}))
      const next = extensions(after).find((t) => (t as {job: string}).job === 'a')!
      assert.equal(next.due_at - chainExtend.due_at, 1800_000 + (extendLeadMs(row()) - extendLeadMs(d)))
      assert.equal((next as {seconds?: number}).seconds, undefined, 'a full extension of the chain again')
    })

    it("INFINITE: the one-shot EXTEND moves the job's rotation by the same amount", () => {
      const d = raised('INFINITE')
      // 45 min into a 60 min job: its replacement (20 min before the end) would be listed now.
      const jobs = [job('a', 2700), job('b', 100)]
      const before = planInfinite(planInput(NOW, row({strategy: 'INFINITE', replicas: 2}), {jobs}))
      assert.deepEqual(lists(before), [{task: 'LIST', limit: 1, due_at: NOW}], 'rotating at the old timeout')
      const plan = planInfinite(planInput(NOW, d, {jobs}))
      assert.deepEqual(extensions(plan), [
        {task: 'EXTEND', job: 'a', seconds: 1800, due_at: NOW},
        {task: 'EXTEND', job: 'b', seconds: 1800, due_at: NOW},
      ])
      assert.deepEqual(lists(plan), [], 'its rotation moved 30 min later')
      // While the one-shot is open (not landed yet), the rotation still counts from the moved end.
      const open = [task({task: 'EXTEND', job: 'a', limit: 1800}), task({task: 'EXTEND', job: 'b', limit: 1800})]
      const waiting = planInfinite(planInput(NOW + 5000, d, {jobs, openTasks: open}))
      assert.deepEqual(waiting.tasks, [], 'nothing twice, nothing listed')
      // Landed: the rotation is due 20 min before the new end, 30 min after the old one's.
      const landed = jobs.map((j) => ({...j, timeout: 5400}))
      const rotation = (S - 2700 + 5400) * 1000 - rotationLeadMs(d)
      assert.deepEqual(lists(planInfinite(planInput(rotation - 1000, d, {jobs: landed}))), [])
      assert.deepEqual(lists(planInfinite(planInput(rotation, d, {jobs: landed}))), [
        {task: 'LIST', limit: 1, due_at: rotation},
      ])
    })

    it('a lower timeout, a deployment not RUNNING, or a job being stopped: no extension', () => {
      const jobs = [job('a', 600), job('b', 600)]
      for (const strategy of ['SIMPLE-EXTEND', 'INFINITE'] as const) {
        const lower = STRATEGY_PLANS[strategy](planInput(NOW, row({strategy, timeout: 30}), {jobs}))
        assert.deepEqual(
          extensions(lower).filter((t) => (t as {seconds?: number}).seconds !== undefined),
          [],
          `${strategy}: lower`,
        )
        const poor = raised(strategy, {status: 'INSUFFICIENT_FUNDS'})
        assert.deepEqual(
          extensions(STRATEGY_PLANS[strategy](planInput(NOW, poor, {jobs}))).filter((t) => 'seconds' in t),
          [],
          `${strategy}: not RUNNING`,
        )
        // Raised and scaled to 1 in the same pass: the job stopped is not extended.
        const both = STRATEGY_PLANS[strategy](planInput(NOW, raised(strategy, {replicas: 1}), {jobs}))
        const [stopped] = stops(both)
        assert.ok(stopped)
        assert.ok(!extensions(both).some((t) => (t as {job: string}).job === stopped), `${strategy}: stopped`)
        assert.equal(extensions(both).filter((t) => 'seconds' in t).length, 1)
      }
    })

    it('SIMPLE and SCHEDULED extend nothing', () => {
      const jobs = [job('a', 600)]
      for (const strategy of ['SIMPLE', 'SCHEDULED'] as const)
        assert.deepEqual(
          extensions(
            STRATEGY_PLANS[strategy](planInput(NOW, strategyRow(strategy, {timeout: 90, replicas: 1}), {jobs})),
          ),
          [],
        )
      assert.deepEqual(
        extensions(planSimple(planInput(NOW, row({strategy: 'SIMPLE', timeout: 90, replicas: 1}), {jobs}))),
        [],
      )
    })
  })
})
