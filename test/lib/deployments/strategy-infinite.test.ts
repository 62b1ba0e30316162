import {strict as assert} from 'node:assert'

import {checkCooldowns, DEFAULT_COOLDOWNS} from '../../../src/lib/deployments/cooldowns.js'
import {INFINITE, rotationLeadMs} from '../../../src/lib/deployments/strategies/durations.js'
import {planInfinite, rapidCooldownMs} from '../../../src/lib/deployments/strategies/infinite.js'
import type {JobHealth, JobOnChain, Plan, PlanInput} from '../../../src/lib/deployments/strategies/plan.js'
import type {DeploymentRow, TaskRow} from '../../../src/lib/deployments/types.js'

import {chainJob, deploymentRow, planInput, taskRow} from '../../helpers/strategy-rows.js'

const NOW = 1_800_000_000_000
const S = NOW / 1000

const deployment = (change: Partial<DeploymentRow> = {}) =>
  deploymentRow(NOW, {
    strategy: 'INFINITE',
    started_at: NOW - 3_600_000,
    throttle_rounds: 0,
    created_at: NOW - 7_200_000,
    updated_at: NOW - 3_600_000,
    ...change,
  })

/** A job started `ago` seconds before NOW, with a one-hour timeout. */
const job = (name: string, ago: number, change: Partial<JobOnChain> = {}) => chainJob(NOW, name, ago, change)

/** A job of this run that started `ago` seconds before NOW and ran `ran` seconds. */
function ended(name: string, ago: number, ran: number, change: Partial<JobOnChain> = {}): JobOnChain {
  return job(name, ago, {state: 'COMPLETED', timeEnd: S - ago + ran, ...change})
}

const task = (change: Partial<TaskRow>) => taskRow(NOW, change)

const input = (change: Partial<PlanInput>) => planInput(NOW, deployment(), change)

const online = (_since: number): JobHealth => ({online: true, cameUp: true})
const starting: JobHealth = {online: false, cameUp: false}
/** A service that came up and no longer answers. */
const offline: JobHealth = {online: false, cameUp: true}
const types = (plan: Plan) => (plan.events ?? []).map((e) => e.type)
const stops = (plan: Plan) => plan.tasks.filter((t) => t.task === 'STOP').map((t) => (t as {job: string}).job)
const lists = (plan: Plan) => plan.tasks.filter((t) => t.task === 'LIST')

describe('INFINITE strategy (pure)', () => {
  it('a starting deployment lists every replica and becomes RUNNING', () => {
    const plan = planInfinite(input({deployment: deployment({status: 'STARTING'})}))
    assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 2, due_at: NOW}])
    assert.equal(plan.status, 'RUNNING')
  })

  it('the replacement is listed rotation_time before a job’s end (default 20 minutes), not a moment sooner', () => {
    const lead = rotationLeadMs(deployment())
    assert.equal(lead, INFINITE.defaultRotationS * 1000)
    // a ends in 20 min + 1 s: nothing yet. Then at exactly 20 min before its end: one replacement.
    const early = planInfinite(input({jobs: [job('a', 3600 - 1201), job('b', 10)]}))
    assert.deepEqual(early.tasks, [])
    const due = planInfinite(input({jobs: [job('a', 3600 - 1200), job('b', 10)]}))
    assert.deepEqual(due.tasks, [{task: 'LIST', limit: 1, due_at: NOW}])
    assert.deepEqual(stops(due), [], 'the old job keeps serving until its replacement is ready')
    // The deployment's own rotation_time (seconds) moves it.
    const own = planInfinite(
      input({deployment: deployment({rotation_time: 900}), jobs: [job('a', 3600 - 1200), job('b', 10)]}),
    )
    assert.deepEqual(own.tasks, [], 'rotation_time 900 s: a is not due yet')
  })

  it('the old job is stopped only once its replacement is ready, with an event', () => {
    const jobs = [job('old', 3600 - 600), job('b', 100), job('new', 5)]
    const waiting = planInfinite(input({jobs, health: {old: online(0), b: online(0), new: starting}}))
    assert.deepEqual(stops(waiting), [])
    assert.deepEqual(lists(waiting), [], 'its replacement is already there')
    const ready = planInfinite(input({jobs, health: {old: online(0), b: online(0), new: online(NOW)}}))
    assert.deepEqual(stops(ready), ['old'])
    assert.deepEqual(ready.stopping, ['old'])
    assert.deepEqual(types(ready), ['JOB_ROTATED'])
    assert.match(ready.events![0]!.message, /old stopped 600 s before its end/)
    // A queued replacement is not ready either.
    const queued = planInfinite(
      input({jobs: [job('old', 3000), job('b', 100), job('new', 0, {state: 'QUEUED', timeStart: 0})]}),
    )
    assert.deepEqual(stops(queued), [])
  })

  it('without a watched service (no exposed port), a running replacement counts as ready', () => {
    const plan = planInfinite(input({jobs: [job('old', 3000), job('b', 100), job('new', 5)]}))
    assert.deepEqual(stops(plan), ['old'])
  })

  it('a job that ends on its own is replaced at once, with an event saying how long it ran', () => {
    const plan = planInfinite(input({jobs: [ended('a', 100, 40, {justEnded: true}), job('b', 100)]}))
    assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 1, due_at: NOW}])
    assert.deepEqual(types(plan), ['JOB_ENDED'])
    assert.match(plan.events![0]!.message, /a completed after 40 s, before its timeout/)
    const timedOut = planInfinite(
      input({
        jobs: [
          ended('a', 3500, 3600, {justEnded: true, timeStart: S - 3500, timeEnd: S + 100}),
          job('b', 100),
          job('c', 30),
        ],
      }),
    )
    assert.match(timedOut.events![0]!.message, /a ran to its timeout \(3600 s\) before a replacement was ready/)
    // Said once: the next pass no longer sees it as just ended.
    assert.deepEqual(types(planInfinite(input({jobs: [ended('a', 100, 40), job('b', 100)]}))), [])
  })

  it('a job whose service went offline is not stopped by the plan (the tunnel watch stops it), nor counted ready', () => {
    const jobs = [job('a', 700), job('b', 700)]
    const plan = planInfinite(input({jobs, health: {a: offline, b: online(0)}}))
    assert.deepEqual(stops(plan), [])
    assert.deepEqual(types(plan), [])
    // At its rotation an offline replacement is no replacement: the old job keeps serving.
    const rotating = [job('old', 3600 - 600), job('b', 100), job('new', 5)]
    assert.deepEqual(
      stops(planInfinite(input({jobs: rotating, health: {old: online(0), b: online(0), new: offline}}))),
      [],
    )
  })

  it('a job that does not come online within startup_timeout is stopped and replaced; none without one', () => {
    const jobs = [job('a', 600), job('b', 700)]
    const health = {a: starting, b: online(0)}
    assert.deepEqual(stops(planInfinite(input({jobs, health}))), [], 'no startup_timeout: no deadline')
    const d = deployment({startup_timeout: 10})
    assert.deepEqual(stops(planInfinite(input({deployment: d, jobs: [job('a', 599), job('b', 700)], health}))), [])
    const plan = planInfinite(input({deployment: d, jobs, health}))
    assert.deepEqual(stops(plan), ['a'])
    assert.deepEqual(types(plan), ['JOB_STARTUP_TIMEOUT'])
    // One that came up once (its tunnel served) and is offline now is past its startup: the tunnel watch's.
    assert.deepEqual(stops(planInfinite(input({deployment: d, jobs, health: {a: offline, b: online(0)}}))), [])
  })

  describe('rapid-completion throttle and fail-safe', () => {
    // replicas x 3 = 6 jobs of this run, each ran 10 s.
    const crashed = (ran = 10) => Array.from({length: 6}, (_, i) => ended(`c${i}`, 100 + i * 20, ran))

    it('the last replicas x 3 completed jobs all under 5 minutes: the next listing waits 60 s (round 1)', () => {
      const plan = planInfinite(input({jobs: crashed()}))
      assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 2, due_at: NOW + 60_000}])
      assert.equal(plan.throttleRounds, 1)
      assert.deepEqual(types(plan), ['RAPID_COMPLETION_THROTTLE'])
      assert.match(plan.events![0]!.message, /waits 60 s \(round 1; the fail-safe stops the deployment at 8\)/)
    })

    it('the delay is the rapid-completion cooldown: 60 s doubling, at most 1 h; the settings change it', () => {
      assert.deepEqual(
        Array.from({length: 8}, (_, round) => rapidCooldownMs(deployment(), DEFAULT_COOLDOWNS, round) / 1000),
        [60, 120, 240, 480, 960, 1920, 3600, 3600],
      )
      const plan = planInfinite(input({deployment: deployment({throttle_rounds: 3}), jobs: crashed()}))
      assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 2, due_at: NOW + 480_000}])
      assert.equal(plan.throttleRounds, 4)
      const cooldowns = checkCooldowns({rapidCompletion: {baseMs: 10_000, multiplier: 3, maxMs: 50_000}})
      const d = deployment({throttle_rounds: 1})
      assert.deepEqual(lists(planInfinite(input({deployment: d, jobs: crashed(), cooldowns}))), [
        {task: 'LIST', limit: 2, due_at: NOW + 30_000},
      ])
      const capped = planInfinite(input({deployment: deployment({throttle_rounds: 2}), jobs: crashed(), cooldowns}))
      assert.deepEqual(lists(capped), [{task: 'LIST', limit: 2, due_at: NOW + 50_000}])
    })

    it('the round that reaches the max streak (8) stops the deployment instead, and lists nothing', () => {
      const seventh = planInfinite(input({deployment: deployment({throttle_rounds: 6}), jobs: crashed()}))
      assert.equal(seventh.throttleRounds, 7)
      assert.equal(seventh.status, undefined)
      const plan = planInfinite(input({deployment: deployment({throttle_rounds: 7}), jobs: crashed()}))
      assert.deepEqual(plan.tasks, [])
      assert.equal(plan.status, 'STOPPING')
      assert.deepEqual(types(plan), ['RAPID_COMPLETION_FAIL_SAFE'])
      assert.equal(plan.events![0]!.category, 'Deployment')
      // A max streak of 3 (the settings): the third round stops it.
      const cooldowns = checkCooldowns({maxStreak: 3})
      const early = planInfinite(input({deployment: deployment({throttle_rounds: 2}), jobs: crashed(), cooldowns}))
      assert.equal(early.status, 'STOPPING')
    })

    it('one job that ran 5 minutes or more in the window lifts it, and the rounds start over', () => {
      const jobs = crashed()
      jobs[0] = ended('long', 400, 300)
      const plan = planInfinite(input({deployment: deployment({throttle_rounds: 5}), jobs}))
      assert.deepEqual(plan.tasks, [{task: 'LIST', limit: 2, due_at: NOW}])
      assert.equal(plan.throttleRounds, 0)
    })

    it('fewer than 3 completed jobs, or jobs of an earlier run, do not throttle; 3 of the window suffice', () => {
      assert.deepEqual(lists(planInfinite(input({jobs: crashed().slice(4)}))), [{task: 'LIST', limit: 2, due_at: NOW}])
      assert.deepEqual(lists(planInfinite(input({jobs: crashed().slice(3)}))), [
        {task: 'LIST', limit: 2, due_at: NOW + 60_000},
      ])
      const earlier = crashed().map((j) => ({...j, created_at: NOW - 7_000_000}))
      assert.deepEqual(lists(planInfinite(input({jobs: earlier}))), [{task: 'LIST', limit: 2, due_at: NOW}])
    })

    it('a crash loop lists at most replicas x (ceil(3 / replicas) + 7) jobs before the fail-safe (the funds it can spend)', () => {
      // Every job listed is taken at once and exits after 1 s; the planner runs every 5 s.
      for (const replicas of [1, 2, 3]) {
        let d = deployment({replicas, status: 'STARTING', started_at: NOW, throttle_rounds: 0})
        const jobs: JobOnChain[] = []
        let open: TaskRow[] = []
        let listed = 0
        let now = NOW
        for (let pass = 0; pass < 10_000 && d.status !== 'STOPPING'; pass++, now += 5000) {
          for (const j of jobs)
            if (j.state === 'RUNNING' && now / 1000 >= j.timeStart + 1)
              Object.assign(j, {state: 'COMPLETED', timeEnd: j.timeStart + 1})
          const plan = planInfinite({deployment: d, jobs, openTasks: open, now})
          open = open.concat(plan.tasks.map((t) => task({...t, limit: t.task === 'LIST' ? t.limit : null})))
          d = {...d, status: plan.status ?? d.status, throttle_rounds: plan.throttleRounds ?? d.throttle_rounds}
          for (const t of open.filter((o) => o.due_at <= now && o.task === 'LIST')) {
            for (let i = 0; i < t.limit!; i++)
              jobs.push(job(`j${listed++}`, 0, {timeStart: now / 1000, created_at: now}))
          }
          open = open.filter((o) => o.due_at > now)
        }
        assert.equal(d.status, 'STOPPING', `replicas ${replicas}: the fail-safe stopped it`)
        // The unthrottled listings until 3 jobs have completed, then one throttled round each up to the streak's.
        const unthrottled = Math.ceil(INFINITE.rapidJobsPerReplica / replicas)
        assert.equal(listed, replicas * (unthrottled + DEFAULT_COOLDOWNS.maxStreak - 1))
      }
    })
  })

  it('time_scale divides every duration: rotation, the rapid threshold, and the throttle delay', () => {
    // timeout 60 min at scale 90: jobs of 40 s; rotation 20 min -> 13.3 s; 5 min -> 3.3 s; 60 s -> 0.67 s.
    const d = deployment({time_scale: 90})
    const lead = rotationLeadMs(d)
    assert.equal(lead, 13_333)
    const j = (name: string) => job(name, 0, {timeStart: S - 27, timeout: 40})
    assert.deepEqual(lists(planInfinite(input({deployment: d, jobs: [j('a'), job('b', 0, {timeout: 40})]}))), [
      {task: 'LIST', limit: 1, due_at: NOW},
    ])
    const fast = Array.from({length: 6}, (_, i) => ended(`c${i}`, 10 + i * 5, 3, {timeout: 40}))
    assert.deepEqual(planInfinite(input({deployment: d, jobs: fast})).tasks, [
      {task: 'LIST', limit: 2, due_at: NOW + 667},
    ])
    const slow = Array.from({length: 6}, (_, i) => ended(`c${i}`, 10 + i * 5, 4, {timeout: 40}))
    assert.deepEqual(planInfinite(input({deployment: d, jobs: slow})).tasks, [{task: 'LIST', limit: 2, due_at: NOW}])
  })

  it('a lowered replica count stops the excess, queued jobs first', () => {
    const plan = planInfinite(
      input({
        deployment: deployment({replicas: 1}),
        jobs: [job('a', 100), job('q', 0, {state: 'QUEUED', timeStart: 0})],
      }),
    )
    assert.deepEqual(stops(plan), ['q'])
    assert.deepEqual(lists(plan), [])
  })

  it('a stopping deployment stops every job and lists nothing', () => {
    const plan = planInfinite(
      input({
        deployment: deployment({status: 'STOPPING'}),
        jobs: [job('a', 100), job('b', 100)],
        openTasks: [task({limit: 1})],
      }),
    )
    assert.deepEqual(stops(plan).sort(), ['a', 'b'])
    assert.equal(plan.cancel.length, 1)
  })
})
