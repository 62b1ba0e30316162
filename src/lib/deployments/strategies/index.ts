/** The strategies by name: one file each, each a pure function from rows and the chain's view to the tasks due. */
import type {Strategy as StrategyName} from '../types.js'
import {planInfinite} from './infinite.js'
import type {Strategy} from './plan.js'
import {planScheduled} from './scheduled.js'
import {planSimple} from './simple.js'
import {planSimpleExtend} from './simple-extend.js'

export const STRATEGY_PLANS: Record<StrategyName, Strategy> = {
  SIMPLE: planSimple,
  'SIMPLE-EXTEND': planSimpleExtend,
  SCHEDULED: planScheduled,
  INFINITE: planInfinite,
}

export {extendLeadMs, INFINITE, jobTimeoutSeconds, POLL_MS, rotationLeadMs, scaledMs} from './durations.js'
export type {DueTask, JobHealth, JobOnChain, Plan, PlanEvent, PlanInput} from './plan.js'
export {isOver} from './plan.js'
