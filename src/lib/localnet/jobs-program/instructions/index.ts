/**
 * The jobs program's 19 instructions as the deployed program declares and runs them
 * (reference/jobs-program-constraints.md section 4), one file each: its accounts in the program's order with
 * their declared type, `mut`, `init`, `close` and constraints (with their errors, in the program's order), and
 * the handler's effects. execute.ts runs them in Anchor's phases.
 */
import type {JobsInstructionName} from '../../../market/instructions.js'
import {assign} from './assign.js'
import {claim} from './claim.js'
import {clean} from './clean.js'
import {cleanAdmin} from './clean-admin.js'
import {close} from './close.js'
import {closeAdmin} from './close-admin.js'
import {complete} from './complete.js'
import {delist} from './delist.js'
import {end} from './end.js'
import {extend} from './extend.js'
import {finish} from './finish.js'
import {list} from './list.js'
import {open} from './open.js'
import {quit} from './quit.js'
import {quitAdmin} from './quit-admin.js'
import {recover} from './recover.js'
import type {InstructionDef} from './shared.js'
import {stop} from './stop.js'
import {update} from './update.js'
import {work} from './work.js'

export type {InstructionDef} from './shared.js'

/** The program, instruction by instruction, in the order of reference section 4 (the IDL's). */
export const INSTRUCTIONS: {[N in JobsInstructionName]: InstructionDef<N>} = {
  open,
  update,
  close,
  closeAdmin,
  assign,
  list,
  delist,
  recover,
  extend,
  end,
  work,
  stop,
  claim,
  complete,
  finish,
  quit,
  quitAdmin,
  clean,
  cleanAdmin,
}
